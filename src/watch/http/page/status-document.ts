import type { ResolvedConfig } from '../../../config/schema.js';
import { capsOf } from '../../../sync/executor/prepare.js';
import {
  statusJsonChunks,
  statusReport,
  type DaemonStatus,
  type RunnerStatus,
  type StatusInput,
  type StatusReport,
} from '../../../sync/report/status.js';
import type { PgStateStore } from '../../../sync/state/pg/index.js';
import type { StateStore } from '../../../sync/state/index.js';

/** The shared state's runners as `status` shows them. */
function runnersOf(state: PgStateStore): RunnerStatus[] {
  return state.runners().map(({ id, host, pid, scope, ...rest }) => ({ id, host, pid, sources: scope, ...rest }));
}

/**
 * What `kbsync status` reports, from the state and the running daemon's status file, and the chunks of
 * its JSON document (`kbsync status --json`, GET /api/status). Each reads the tracked files in its own
 * pass (StateStore.passTrackedFiles), none held.
 */
export function statusDocument(
  state: StateStore,
  config: ResolvedConfig,
  daemon: DaemonStatus | null,
): { report: () => StatusReport; json: () => Iterable<string> } {
  const input = (): StatusInput => ({
    tracked: state.passTrackedFiles(),
    lastRun: state.lastRun('sync'),
    credits: state.creditsUsed(null),
    caps: capsOf(config),
    outbox: state.openOpCounts(),
    daemon,
    entryStatuses: [...state.trackedEntries().values()].map((e) => e.status),
    ...('runners' in state ? { runners: runnersOf(state as PgStateStore) } : {}),
  });
  return { report: () => statusReport(input()), json: () => statusJsonChunks(input()) };
}
