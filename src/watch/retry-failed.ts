import { costOf } from '../shared/plans.js';
import { processingErrorClass } from '../shared/processing-errors.js';
import type { SyncDeps } from '../sync/executor/prepare.js';
import type { TrackedIndex } from '../sync/tracked/tracked-index.js';
import type { TrackedFile } from '../sync/types.js';
import type { PlanGate } from './plan-answer.js';

/** The page's answer to a retry: `accepted` when the next cycle plans the reprocess, with its price. */
export type RetryAnswer = { accepted: boolean; message: string; credits: number };

/**
 * Whether a retry of this tracked row may pass: a failed remote copy whose error is not permanent, with
 * upload.maxReprocessAttempts above 0 (the planner reprocesses only below it). The reason when not.
 */
export function retryRefusal(t: TrackedFile | null, maxReprocessAttempts: number): string | null {
  if (t === null || t.lastAction === 'deleted') return 'not a tracked file';
  if (t.remoteStatus !== 'failed' || t.remoteId === null) return 'its remote copy has not failed';
  if (processingErrorClass(t.remoteError) === 'permanent')
    return 'a retry would fail the same way: fix the file; it is uploaded again when it changes';
  if (maxReprocessAttempts === 0) return 'upload.maxReprocessAttempts is 0: no reprocess is planned';
  return null;
}

/**
 * Retries one failed file from the status page through the ordinary door: its reprocess attempts are
 * set back to one below upload.maxReprocessAttempts (in the state and in the kept index) and its path is
 * carried to a cycle woken now, whose plan gives it `reprocess` (failedRemoteItem): the outbox row and
 * the credit reservation come before the call, the attempt is counted when it settles. It waits for a
 * cycle or a plan running, as explain does, so that neither writes the row under it.
 */
export function createRetry(o: {
  deps: SyncDeps;
  gate: PlanGate;
  keptIndex: () => Promise<TrackedIndex | null>;
  cycleEnded: () => Promise<void>;
  /** Puts the path in the next cycle's scope. */
  carry: (source: string, path: string) => void;
  wake: () => void;
}): (source: string, path: string) => Promise<RetryAnswer> {
  const credits = costOf({ kind: 'reprocess' });
  return async (source, path) => {
    for (;;) {
      if (o.gate.cycling) await o.cycleEnded();
      else if (o.gate.computing !== null) await o.gate.computing;
      else {
        // The index being read again is the one the next cycle uses: the row is put in it once it is read.
        const kept = await o.keptIndex();
        if (!o.gate.cycling && o.gate.computing === null) return retryNow(kept);
      }
    }
    function retryNow(kept: TrackedIndex | null): RetryAnswer {
      const { state, config } = o.deps;
      const max = config.upload.maxReprocessAttempts;
      const t = state.getTracked(source, path);
      const refusal = retryRefusal(t, max);
      if (refusal !== null || t === null) return { accepted: false, message: refusal ?? 'not a tracked file', credits: 0 };
      if (t.reprocessAttempts >= max) {
        const { updatedAt: _, ...row } = t;
        state.upsertTracked({ ...row, reprocessAttempts: max - 1 });
        kept?.put(source, path, state.getTracked(source, path));
      }
      o.carry(source, path);
      o.wake();
      return { accepted: true, message: `reprocessed by the next sync cycle (${credits} credits), which starts now`, credits };
    }
  };
}
