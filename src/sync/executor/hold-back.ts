import { trackedKey } from '../tracked/keys.js';
import type { Observation, SyncPlan } from '../types.js';

/**
 * The files a pass is told to leave for later (DeltaPass.holdBack: the daemon's files still being
 * written), by trackedKey, with why. They are planned as files that changed while hashed: hash null,
 * so `defer:changing`, nothing sent or recorded, and the daemon carries them into a later cycle.
 */
export type HeldBack = ReadonlyMap<string, string>;

/** The observation with the held files' hashes dropped; the same object when none is held. */
export function withoutHeld(observation: Observation, held: HeldBack): Observation {
  if (held.size === 0) return observation;
  const files = observation.files.map((f) => (f.sha256 !== null && held.has(trackedKey(f.source, f.path)) ? { ...f, sha256: null } : f));
  return { ...observation, files };
}

/** Each held file's plan line says why it waits, instead of the generic "changed while it was being read". */
export function explainHeld(plan: SyncPlan, held: HeldBack): void {
  if (held.size === 0) return;
  for (const item of plan.items) {
    if (item.action !== 'defer:changing') continue;
    const why = held.get(trackedKey(item.source, item.path));
    if (why !== undefined) item.reason = why;
  }
}
