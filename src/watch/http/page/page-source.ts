import type { ResolvedConfig } from '../../../config/schema.js';
import type { StateStore } from '../../../sync/state/index.js';
import { localStatePath } from '../../../shared/state-url.js';
import type { DaemonSnapshot } from '../../snapshot.js';
import { readRunningDaemon } from '../../status-file.js';
import { capsOf } from '../../../sync/executor/prepare.js';
import { pageFiles, pageModel, type CycleRow, type PageFiles, type PageModel } from './page-model.js';
import { statusDocument } from './status-document.js';

/** How many cycles the page lists. */
const CYCLES_KEPT = 20;

/**
 * What the page is made from: the state (as `kbsync status` reads it), the daemon's status file beside
 * it, the snapshot, and the last cycles the daemon has ended since it started (kept here, newest first).
 * The tracked rows are read once for every page and push until the daemon's snapshot changes or a paid
 * call is made (`invalidate`): open pages and reloads between two cycles cost no read of the state.
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
}): { model(): PageModel; status(): Iterable<string>; noteSnapshot(s: DaemonSnapshot): void; invalidate(): void } {
  const cycles: CycleRow[] = [];
  let files: PageFiles | null = null;
  const nowMs = o.nowMs ?? Date.now;
  const document = () => statusDocument(o.state, o.config(), readRunningDaemon(localStatePath(o.config())));
  return {
    invalidate: () => (files = null),
    noteSnapshot(s) {
      files = null;
      const last = s.lastSync;
      if (last === null || cycles[0]?.at === last.at) return;
      cycles.unshift({ ...last });
      if (cycles.length > CYCLES_KEPT) cycles.pop();
    },
    status: () => document().json(),
    model() {
      const snapshot = o.snapshot();
      if (snapshot === null) throw new Error('the daemon has not started yet');
      const config = o.config();
      files ??= pageFiles(o.state.passTrackedFiles(), config);
      const used = o.state.creditsUsed(null);
      return pageModel({
        credits: { day: used.day, month: used.month, caps: capsOf(config) },
        outbox: o.state.openOpCounts(),
        files,
        config,
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
