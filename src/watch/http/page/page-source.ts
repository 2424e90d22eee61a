import type { ResolvedConfig } from '../../../config/schema.js';
import type { StateStore } from '../../../sync/state/index.js';
import { localStatePath } from '../../../shared/state-url.js';
import type { DaemonSnapshot } from '../../snapshot.js';
import { readRunningDaemon } from '../../status-file.js';
import { pageModel, type CycleRow, type PageModel } from './page-model.js';
import { statusDocument } from './status-document.js';

/** How many cycles the page lists. */
const CYCLES_KEPT = 20;

/**
 * What the page is made from: the state (as `kbsync status` reads it), the daemon's status file beside
 * it, the snapshot, and the last cycles the daemon has ended since it started (kept here, newest first).
 */
export function createPageSource(o: {
  state: StateStore;
  config: () => ResolvedConfig;
  snapshot: () => DaemonSnapshot | null;
  syncing: () => boolean;
  version: string;
  configPath: string;
  http: () => string | null;
  nowMs?: () => number;
}): { model(): PageModel; status(): unknown; noteSnapshot(s: DaemonSnapshot): void } {
  const cycles: CycleRow[] = [];
  const nowMs = o.nowMs ?? Date.now;
  const document = () => statusDocument(o.state, o.config(), readRunningDaemon(localStatePath(o.config())));
  return {
    noteSnapshot(s) {
      const last = s.lastSync;
      if (last === null || cycles[0]?.at === last.at) return;
      cycles.unshift({ ...last });
      if (cycles.length > CYCLES_KEPT) cycles.pop();
    },
    status: () => document().report,
    model() {
      const { report, tracked } = document();
      const snapshot = o.snapshot();
      if (snapshot === null) throw new Error('the daemon has not started yet');
      return pageModel({
        report,
        tracked,
        config: o.config(),
        snapshot,
        byDay: o.state.ledgerTotals().byDay,
        cycles,
        syncing: o.syncing(),
        version: o.version,
        configPath: o.configPath,
        http: o.http(),
        nowMs: nowMs(),
      });
    },
  };
}
