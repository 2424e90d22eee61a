import { ENTRY_LISTING_KEY } from '../intelligence/reconcile.js';
import type { StateStore } from '../state/index.js';

/**
 * What the writer's lock would repair before a plan reads the state (the lock holder's open, then
 * preparePlan): a state not yet checked against the dataset, outcomes unknown, calls left in flight
 * and runs left running (by a process that ended, or a guest's still under way: the recovery spares
 * those), intelligence entries not yet adopted from the listing (`adoptEntries`: an intelligence
 * source is configured). Empty: a plan read beside the lock sees what one made with it would.
 */
export function writerRepairs(state: StateStore, o: { adoptEntries: boolean }): string[] {
  const repairs: string[] = [];
  if (state.remoteCheckPending()) repairs.push('not yet checked against the dataset');
  if (state.openOpCounts().unknown > 0) repairs.push('outcomes unknown');
  if (state.inFlightOps().length > 0 || state.lastRun()?.status === 'running') repairs.push('calls or runs left under way');
  if (o.adoptEntries && state.getMeta(ENTRY_LISTING_KEY) === null) repairs.push('entries not yet adopted from the listing');
  return repairs;
}
