import { performance } from 'node:perf_hooks';
import type { Source } from '../src/config/schema.js';
import { uploadCost } from '../src/shared/plans.js';
import { knownFiles, observeSources } from '../src/sync/sources/index.js';
import { openState } from '../src/sync/state/index.js';
import type { ObservedFile } from '../src/sync/types.js';
import type { ConvertStage } from '../src/sync/sources/converted.js';
import { remoteNameFor } from '../src/sync/tracked/keys.js';

/** A state seeded as a finished first sync of `source` leaves it, and what it took. */
export type SeededState = {
  /** The candidate files, as the cold observe saw them (every one hashed and recorded). */
  files: ObservedFile[];
  observeMs: number;
  recordMs: number;
};

const NO_CAPS = { run: Number.MAX_SAFE_INTEGER, day: Number.MAX_SAFE_INTEGER, month: Number.MAX_SAFE_INTEGER };

/**
 * Observes `source` with an empty state (every file hashed), then records every file as uploaded
 * and processed through the same bookkeeping a first `kbsync sync` does (outbox, reserve, settle,
 * finishRun): the state then looks fully synced, without 100k uploads to a service. Remote ids are
 * "1", "2"... in path order.
 */
export async function seedSyncedState(statePath: string, source: Source, stateDir: string, convert?: ConvertStage): Promise<SeededState> {
  const t0 = performance.now();
  const observation = await observeSources([source], {
    stateDir,
    known: knownFiles(() => undefined),
    ...(convert === undefined ? {} : { convert }),
  });
  const files = observation.files.filter((f): f is ObservedFile & { sha256: string } => f.sha256 !== null);
  const t1 = performance.now();
  const state = openState(statePath);
  try {
    // A first sync lists the dataset (empty here) before it plans: that check is part of its bookkeeping.
    state.rebuildFromRemote([], () => null);
    const run = state.startRun('sync');
    const ops = state.enqueueMany(
      files.map((f) => ({
        kind: 'upload' as const,
        source: f.source,
        path: f.path,
        sha256: f.sha256,
        size: f.size,
        mtimeNs: f.mtimeNs,
        inode: f.inode,
        remoteName: remoteNameFor(f.source, f.path, false),
        credits: uploadCost(f.converted?.markdownBytes ?? f.size),
        reason: 'new file',
        runId: run,
      })),
    );
    state.transaction(() => {
      ops.forEach((id, i) => {
        state.reserve(id, NO_CAPS, run);
        state.settle(id, { outcome: 'done', creditsCharged: null, remoteId: String(i + 1), remoteStatus: 'processed' });
      });
    });
    state.finishRun(run, 'done', { uploaded: files.length });
  } finally {
    state.close();
  }
  return { files, observeMs: t1 - t0, recordMs: performance.now() - t1 };
}
