import type { ResolvedConfig } from '../../../config/schema.js';
import type { TrackedFile } from '../../../sync/types.js';
import type { DaemonSnapshot } from '../../snapshot.js';
import { processingErrorClass } from '../../../shared/processing-errors.js';
import { costOf } from '../../../shared/plans.js';
import { retryRefusal } from '../../retry-failed.js';

/** One source as the page shows it: where it is, how it is watched, its files by state. */
export type SourceRow = {
  name: string;
  where: string;
  watch: string;
  tracked: number;
  processed: number;
  processing: number;
  failed: number;
  deferred: number;
  notUploaded: number;
  deleted: number;
  skipped: { reason: string; files: number }[];
  lastChange: string | null;
};

/** A file the page lists as needing attention, with its reason (the words of the plan and the service). */
export type AttentionRow = {
  source: string;
  path: string;
  what: 'failed' | 'deferred' | 'skipped';
  reason: string;
  /** For a failed copy: whether a retry may pass, and what happens next. */
  next: string | null;
  /** A failed copy a retry may pass: the retry's price (a reprocess). Null: no retry is offered. */
  retry: { credits: number } | null;
};

/** The last cycles, newest first. */
export type CycleRow = NonNullable<DaemonSnapshot['lastSync']>;

/** Everything the page shows, made from the status document, the tracked rows and the daemon's snapshot. */
export type PageModel = {
  generatedAt: string;
  daemon: { pid: number; startedAt: string; version: string; configPath: string; ready: boolean; http: string | null };
  now: { syncing: boolean; waitingFor: string[]; remote: DaemonSnapshot['remote']; cycle: DaemonSnapshot['cycle'] };
  sources: SourceRow[];
  money: {
    days: { day: string; credits: number }[];
    day: number;
    dayCap: number;
    month: number;
    monthCap: number;
    runCap: number;
    /** The balance the service last reported (null: it has not). */
    balance: DaemonSnapshot['balance'];
    deferred: DaemonSnapshot['deferred'];
  };
  health: Pick<DaemonSnapshot, 'target' | 'lastError' | 'lastSuccessAt' | 'watches' | 'counters' | 'config'> & {
    outbox: { pending: number; unknown: number };
  };
  cycles: CycleRow[];
  recent: { source: string; path: string; action: string; reason: string; at: string; remoteStatus: string | null }[];
  attention: AttentionRow[];
  /** Rows left out of `attention` (it shows at most ATTENTION_SHOWN). */
  attentionMore: number;
};

const RECENT_SHOWN = 50;
const ATTENTION_SHOWN = 100;
const CHART_DAYS = 30;

/** A clone URL without its user or password. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1');
}

/** The UTC days of the chart, oldest first, ending today. */
function lastDays(nowMs: number): string[] {
  const days: string[] = [];
  for (let i = CHART_DAYS - 1; i >= 0; i--) days.push(new Date(nowMs - i * 86_400_000).toISOString().slice(0, 10));
  return days;
}

/** A source's tracked files by state, as its row shows them. */
type SourceFiles = Omit<SourceRow, 'name' | 'where' | 'watch'>;

const noFiles = (): SourceFiles => ({
  tracked: 0,
  processed: 0,
  processing: 0,
  failed: 0,
  deferred: 0,
  notUploaded: 0,
  deleted: 0,
  skipped: [],
  lastChange: null,
});

/** What the page shows of the tracked files: counts per source, the files needing attention, the last changed. */
export type PageFiles = {
  bySource: Map<string, SourceFiles>;
  recent: PageModel['recent'];
  attention: AttentionRow[];
  attentionMore: number;
};

/**
 * The page's view of the tracked files, in one pass that keeps no row but the few it lists: the
 * page holds this, not the files (a daemon's state can hold a million).
 */
export function pageFiles(tracked: Iterable<TrackedFile>, config: ResolvedConfig): PageFiles {
  const bySource: PageFiles['bySource'] = new Map();
  for (const src of config.sources) bySource.set(src.name, noFiles());
  const skips = new Map<string, Map<string, number>>();
  const attention: AttentionRow[] = [];
  let attentionCount = 0;
  const recent: TrackedFile[] = [];
  for (const f of tracked) {
    const row = bySource.get(f.source);
    if (row === undefined) continue;
    if (row.lastChange === null || f.updatedAt > row.lastChange) row.lastChange = f.updatedAt;
    keepNewest(recent, f);
    if (f.lastAction === 'deleted') {
      row.deleted++;
      continue;
    }
    row.tracked++;
    const st = f.remoteStatus;
    if (st === 'processed') row.processed++;
    else if (st === 'queued' || st === 'processing') row.processing++;
    else if (st === 'failed') row.failed++;
    else if (st === null) row.notUploaded++;
    const action = f.lastAction ?? '';
    let what: AttentionRow['what'] | null = st === 'failed' ? 'failed' : null;
    if (action.startsWith('defer:')) {
      row.deferred++;
      what ??= 'deferred';
    } else if (action.startsWith('skip:') && action !== 'skip:unchanged' && action !== 'skip:duplicate-content') {
      const bySource = skips.get(f.source) ?? new Map<string, number>();
      skips.set(f.source, bySource.set(action.slice(5), (bySource.get(action.slice(5)) ?? 0) + 1));
      if (action !== 'skip:ignored') what ??= 'skipped';
    }
    if (what === null) continue;
    attentionCount++;
    if (attention.length < ATTENTION_SHOWN)
      attention.push({
        source: f.source,
        path: f.path,
        what,
        reason: what === 'failed' && f.remoteError ? `the service could not process it: ${f.remoteError}` : (f.lastReason ?? action),
        next: what === 'failed' ? retryVerdict(f, config.upload.maxReprocessAttempts) : null,
        retry:
          what === 'failed' && retryRefusal(f, config.upload.maxReprocessAttempts) === null
            ? { credits: costOf({ kind: 'reprocess' }) }
            : null,
      });
  }
  for (const [source, reasons] of skips) {
    const row = bySource.get(source) as SourceFiles;
    row.skipped = [...reasons].map(([reason, files]) => ({ reason, files })).sort((a, b) => b.files - a.files);
  }
  return {
    bySource,
    recent: recent.map((f) => ({
      source: f.source,
      path: f.path,
      action: f.lastAction ?? 'tracked',
      reason: f.lastReason ?? '',
      at: f.updatedAt,
      remoteStatus: f.remoteStatus,
    })),
    attention,
    attentionMore: attentionCount - attention.length,
  };
}

export function pageModel(o: {
  /** Credits used today and this month, and the caps. */
  credits: { day: number; month: number; caps: { run: number; day: number; month: number } };
  outbox: { pending: number; unknown: number };
  /** The tracked files as the page shows them (pageFiles). */
  files: PageFiles;
  config: ResolvedConfig;
  snapshot: DaemonSnapshot;
  /** Credits spent and reserved per UTC day ("YYYY-MM-DD"), from the ledger. */
  byDay: ReadonlyMap<string, { reserved: number; spent: number }>;
  cycles: readonly CycleRow[];
  syncing: boolean;
  version: string;
  configPath: string;
  http: string | null;
  nowMs: number;
}): PageModel {
  const { snapshot: s, config } = o;
  const rows: SourceRow[] = [];
  for (const src of config.sources) {
    const w = s.watches.find((x) => x.source === src.name);
    const where = src.git !== undefined ? `${withoutCredentials(src.git.url)} @ ${src.git.ref}` : (src.path ?? '');
    const watch =
      src.git !== undefined
        ? `git poll every ${src.git.pollSeconds} s`
        : w === undefined
          ? 'not watched yet'
          : `${w.backend}${w.note === null ? '' : ` (${w.note})`}`;
    // A source added by a config reload since the files were read has none yet.
    rows.push({ name: src.name, where, watch, ...(o.files.bySource.get(src.name) ?? noFiles()) });
  }
  const caps = o.credits.caps;
  return {
    generatedAt: new Date(o.nowMs).toISOString(),
    daemon: { pid: s.pid, startedAt: s.startedAt, version: o.version, configPath: o.configPath, ready: s.ready, http: o.http },
    now: { syncing: o.syncing, waitingFor: s.waitingFor, remote: s.remote, cycle: s.cycle },
    sources: rows,
    money: {
      days: lastDays(o.nowMs).map((day) => {
        const d = o.byDay.get(day);
        return { day, credits: d === undefined ? 0 : d.spent + d.reserved };
      }),
      day: o.credits.day,
      dayCap: caps.day,
      month: o.credits.month,
      monthCap: caps.month,
      runCap: caps.run,
      balance: s.balance,
      deferred: s.deferred,
    },
    health: {
      target: s.target,
      lastError: s.lastError,
      lastSuccessAt: s.lastSuccessAt,
      watches: s.watches,
      counters: s.counters,
      config: s.config,
      outbox: o.outbox,
    },
    cycles: [...o.cycles],
    recent: o.files.recent,
    attention: o.files.attention,
    attentionMore: o.files.attentionMore,
  };
}

/** Keeps the RECENT_SHOWN rows changed last, newest first (an insertion into a short sorted list). */
function keepNewest(list: TrackedFile[], f: TrackedFile): void {
  if (list.length === RECENT_SHOWN && (list[RECENT_SHOWN - 1] as TrackedFile).updatedAt >= f.updatedAt) return;
  let i = list.length;
  while (i > 0 && (list[i - 1] as TrackedFile).updatedAt < f.updatedAt) i--;
  list.splice(i, 0, f);
  if (list.length > RECENT_SHOWN) list.pop();
}

/** Whether reprocessing a failed copy may pass, in words: a permanent error is not retried at all. */
function retryVerdict(f: TrackedFile, max: number): string {
  if (processingErrorClass(f.remoteError) === 'permanent')
    return 'a retry would fail the same way: fix the file; it is uploaded again when it changes';
  if (f.reprocessAttempts < max)
    return `reprocessed by the daemon (attempt ${f.reprocessAttempts + 1} of ${max}, ${costOf({ kind: 'reprocess' })} credits)`;
  return `reprocessed ${f.reprocessAttempts} of ${max} times (upload.maxReprocessAttempts): the daemon tries no more by itself`;
}
