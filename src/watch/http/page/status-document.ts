import type { ResolvedConfig } from '../../../config/schema.js';
import { capsOf } from '../../../sync/executor/prepare.js';
import { statusReport, type DaemonStatus, type RunnerStatus, type StatusReport } from '../../../sync/report/status.js';
import type { PgStateStore } from '../../../sync/state/pg/index.js';
import type { StateStore } from '../../../sync/state/index.js';
import type { TrackedFile } from '../../../sync/types.js';

/** The shared state's runners as `status` shows them. */
function runnersOf(state: PgStateStore): RunnerStatus[] {
  return state.runners().map(({ id, host, pid, scope, ...rest }) => ({ id, host, pid, sources: scope, ...rest }));
}

/**
 * The document `kbsync status --json` prints and `GET /api/status` serves, from the state and the
 * running daemon's status file; with the tracked rows it was made from (the page reads more of them).
 */
export function statusDocument(
  state: StateStore,
  config: ResolvedConfig,
  daemon: DaemonStatus | null,
): { report: StatusReport; tracked: TrackedFile[] } {
  const tracked = [...state.loadTrackedFiles().values()];
  const report = statusReport({
    tracked,
    lastRun: state.lastRun('sync'),
    credits: state.creditsUsed(null),
    caps: capsOf(config),
    outbox: { pending: state.pendingOps().length, unknown: state.unknownOps().length },
    daemon,
    entryStatuses: [...state.trackedEntries().values()].map((e) => e.status),
    ...('runners' in state ? { runners: runnersOf(state as PgStateStore) } : {}),
  });
  return { report, tracked };
}
