import type { RemoteFile } from '../../client/index.js';
import type { OutboxOp, StateStore } from '../state/index.js';
import { toRemoteStatus } from '../state/index.js';

/** What reconciling unknown outcomes found. */
export type ReconcileReport = {
  found: number;
  notFound: number;
  /** Uploads and reprocesses found to have gone through, and the credits each was charged (its planned price). */
  paidFound: number;
  creditsFound: number;
};

/**
 * Settles every operation whose outcome is unknown (a timeout, a lost response, a crash between the
 * call and its record) against the remote listing, before anything is retried:
 * - an upload is found when a file with its remote name and SHA-256 is listed (the newest such file);
 *   found → done, charged; not found → pending again, to be retried with the same idempotency key;
 * - a reprocess is taken as done when its file is still listed (we cannot tell, so we assume it was charged);
 * - a reindex, a query or a chat cannot be checked and is taken as done (charged), which errs on the
 *   side of the budget.
 */
export function reconcileUnknown(state: StateStore, listing: readonly RemoteFile[]): ReconcileReport {
  const report: ReconcileReport = { found: 0, notFound: 0, paidFound: 0, creditsFound: 0 };
  const byName = new Map<string, RemoteFile[]>();
  for (const file of listing) {
    const list = byName.get(file.name);
    if (list === undefined) byName.set(file.name, [file]);
    else list.push(file);
  }
  for (const op of state.unknownOps()) {
    // Checked against the service's entry listing instead (intelligence/reconcile.ts).
    if (op.kind === 'intelligence' || op.kind === 'intelligence_batch') continue;
    const match = findRemote(op, byName, listing);
    state.resolveUnknown(op.id, match);
    if (match === null) report.notFound++;
    else {
      report.found++;
      if (op.kind === 'upload' || op.kind === 'reprocess') {
        report.paidFound++;
        report.creditsFound += op.credits;
      }
    }
  }
  return report;
}

function findRemote(op: OutboxOp, byName: Map<string, RemoteFile[]>, listing: readonly RemoteFile[]) {
  if (op.kind === 'upload') {
    const candidates = (byName.get(op.remoteName ?? '') ?? []).filter((f) =>
      f.sha256 === null ? f.size === op.size : f.sha256 === op.sha256,
    );
    const newest = candidates.at(-1);
    return newest === undefined ? null : { remoteId: newest.id, status: toRemoteStatus(newest.status) };
  }
  if (op.kind === 'reprocess') {
    const file = listing.find((f) => f.id === op.remoteId);
    return file === undefined ? null : { remoteId: file.id, status: toRemoteStatus(file.status) };
  }
  return { remoteId: op.kind, status: 'processed' as const };
}
