import { formatCount, plural } from '../planner/format.js';
import type { PlanTotals, TrackedFile } from '../types.js';
import { fields } from './columns.js';
import { daemonLines } from './daemon-lines.js';
import { printable } from '../../shared/printable.js';
import type { PgRunnerRecord } from '../state/pg/index.js';

/** What `kbsync status` reports; its JSON document adds `items` (statusJsonChunks). */
export type StatusReport = {
  /** The last sync's totals (zeros when there was none). */
  summary: PlanTotals;
  /** Documents the last sync could not convert, by action (skip:encrypted, skip:no-text, skip:convert-failed); absent when none. */
  notConverted?: Record<string, number>;
  /**
   * Files in the source now, by the status of their remote copy; `deleted`: rows of files deleted
   * locally whose remote copies are kept; `chunks`: the chunks the service listed for the remote
   * copies of the files in the source now.
   */
  tracked: {
    files: number;
    byRemoteStatus: Record<string, number>;
    deleted: number;
    chunks: number;
    /** The files in the source whose remote copy failed processing: how many, and the first few's names as status prints them. */
    failed: { files: number; first: string[] };
  };
  credits: { run: number; day: number; month: number; caps: { run: number; day: number; month: number }; utcDay: string; utcMonth: string };
  outbox: { pending: number; unknown: number };
  /** `stop`: why the last sync stopped spending (the service refused, a Retry-After too long...), or null. */
  lastRun: {
    id: number;
    status: string;
    startedAt: string;
    finishedAt: string | null;
    stop: { by: string; code: string; message: string } | null;
  } | null;
  /** The `kbsync watch` running on this state, if one is: when it last synced and what it waits for. */
  daemon: DaemonStatus | null;
  /** Intelligence entries the dataset holds, by their last known status (only when there are any). */
  entries?: { total: number; byStatus: Record<string, number> };
  /** With a PostgreSQL state only: every runner that wrote to it, newest first (docs/scale.md). */
  runners?: RunnerStatus[];
};

/** One process that wrote to a shared (PostgreSQL) state: its runner record, `sources` (comma-separated) for its scope. */
export type RunnerStatus = Omit<PgRunnerRecord, 'scope'> & { sources: string };

/** What `kbsync status` says of a running daemon (from the status file it keeps beside the state). */
export type DaemonStatus = {
  pid: number;
  startedAt: string;
  http: string | null;
  ready: boolean;
  lastSync: {
    at: string;
    reasons: string[];
    status: string;
    uploaded: number;
    deferred: number;
    failed: number;
    creditsSpent: number;
  } | null;
  lastError: { at: string; message: string } | null;
  /** When its last sync ended well (absent in the status file of an older kbsync). */
  lastSuccessAt?: string | null;
  /** Whether the daemon's target answers (absent in the status file of an older kbsync). */
  target?: {
    reachable: boolean;
    unreachableSince: string | null;
    lastError: string | null;
    changesWaiting: number;
    nextProbeAt: string | null;
  } | null;
  /** What the daemon's last cycle deferred by the budget, and what it waits for (null or absent: nothing). */
  deferred?: { files: number; waitsFor: string[] } | null;
  /** Copies still processing at the daemon's last listing, and when it reads the next. */
  remote?: { processing: number; nextListingAt: string } | null;
  /** The cycle running now: why, its paid calls done of total, credits so far, its end at the rate limit (absent in an older kbsync's file). */
  cycle?: { startedAt: string; reasons: string[]; done: number; total: number; creditsSoFar: number; etaAt: string | null } | null;
  /** The balance the service last reported (absent in an older kbsync's file; null: not reported). */
  balance?: { credits: number; at: string } | null;
  waitingFor: string[];
  watches: { source: string; backend: string; note: string | null; folders?: { polled: number; watched: number } }[];
  /** The daemon's last heartbeat, and whether it is recent enough (absent in the status file of an older kbsync). */
  heartbeat?: { at: string; silentSeconds: number; answering: boolean };
  /** The daemon's last config reload (absent in the status file of an older kbsync). */
  config?: { last: { at: string; trigger: string; outcome: string; changed: string[]; errors: string[] } | null };
};

/** One item of the JSON document per tracked file: its last action and reason; `credits` is 0 (status spends nothing). */
export type StatusItem = {
  source: string;
  path: string;
  action: string;
  reason: string;
  credits: number;
  remoteId: string | null;
  remoteStatus: string | null;
  /** How many chunks the service listed for the remote copy (null: not listed yet, or no copy). */
  remoteChunks: number | null;
};

/** What status reads of a tracked file. */
export type StatusFile = Pick<TrackedFile, 'source' | 'path' | 'lastAction' | 'lastReason' | 'remoteId' | 'remoteStatus' | 'remoteChunks'>;

export type StatusInput = {
  /** The tracked files, in (source, path) order, read once here (a large state is not held as objects: TrackedIndex.passingFiles). */
  tracked: Iterable<StatusFile>;
  lastRun: { id: number; status: string; startedAt: string; finishedAt: string | null; summary: unknown } | null;
  credits: { day: number; month: number; utcDay: string; utcMonth: string };
  caps: { run: number; day: number; month: number };
  outbox: { pending: number; unknown: number };
  daemon?: DaemonStatus | null;
  /** The state's intelligence entries' statuses (pending, processed, failed...). */
  entryStatuses?: readonly string[];
  runners?: RunnerStatus[];
};

const ZERO: PlanTotals = { uploaded: 0, unchanged: 0, renamed: 0, skipped: 0, deferred: 0, failed: 0, creditsPlanned: 0, creditsSpent: 0 };

/** How many failed files `status` names; `kbsync audit` lists every one. */
const FAILED_NAMED = 5;

/** The counts of the tracked files status reports, made as they are read. */
class TrackedTally {
  readonly byRemoteStatus: Record<string, number> = {};
  files = 0;
  deleted = 0;
  chunks = 0;
  failed = 0;
  readonly #firstFailed: StatusFile[] = [];
  #firstSource: string | null = null;
  #multi = false;

  add(f: StatusFile): void {
    this.#firstSource ??= f.source;
    if (f.source !== this.#firstSource) this.#multi = true;
    if (f.lastAction === 'deleted') {
      this.deleted++;
      return;
    }
    this.files++;
    const key = f.remoteStatus ?? 'not uploaded';
    this.byRemoteStatus[key] = (this.byRemoteStatus[key] ?? 0) + 1;
    this.chunks += f.remoteChunks ?? 0;
    if (f.remoteStatus === 'failed' && this.failed++ < FAILED_NAMED) this.#firstFailed.push(f);
  }

  counts(): StatusReport['tracked'] {
    const { files, byRemoteStatus, deleted, chunks, failed } = this;
    const first = this.#firstFailed.map((f) => (this.#multi ? `${f.source}/${f.path}` : f.path));
    return { files, byRemoteStatus, deleted, chunks, failed: { files: failed, first } };
  }
}

/** Builds the status from what the state holds, in one pass over the tracked files. */
export function statusReport(input: StatusInput): StatusReport {
  const tally = new TrackedTally();
  for (const f of input.tracked) tally.add(f);
  return reportOf(input, tally);
}

function reportOf(input: StatusInput, tally: TrackedTally): StatusReport {
  const last = input.lastRun;
  const lastTotals = (last?.summary as { totals?: PlanTotals } | null | undefined)?.totals;
  const notConverted = (last?.summary as { notConverted?: Record<string, number> } | null | undefined)?.notConverted;
  return {
    summary: lastTotals ?? ZERO,
    ...(notConverted === undefined ? {} : { notConverted }),
    tracked: tally.counts(),
    credits: {
      run: 0,
      day: input.credits.day,
      month: input.credits.month,
      caps: input.caps,
      utcDay: input.credits.utcDay,
      utcMonth: input.credits.utcMonth,
    },
    outbox: input.outbox,
    lastRun:
      last === null
        ? null
        : { id: last.id, status: last.status, startedAt: last.startedAt, finishedAt: last.finishedAt, stop: stopOf(last.summary) },
    daemon: input.daemon ?? null,
    ...entriesOf(input.entryStatuses ?? []),
    ...(input.runners === undefined ? {} : { runners: input.runners }),
  };
}

/** The stop a finished run recorded in its summary (`{ totals, stop }`), or null. */
function stopOf(summary: unknown): { by: string; code: string; message: string } | null {
  const stop = (summary as { stop?: unknown } | null | undefined)?.stop as
    { by?: unknown; code?: unknown; message?: unknown } | null | undefined;
  if (typeof stop?.by !== 'string' || typeof stop.code !== 'string' || typeof stop.message !== 'string') return null;
  return { by: stop.by, code: stop.code, message: stop.message };
}

function entriesOf(statuses: readonly string[]): Pick<StatusReport, 'entries'> {
  if (statuses.length === 0) return {};
  const byStatus: Record<string, number> = {};
  for (const s of statuses) byStatus[s] = (byStatus[s] ?? 0) + 1;
  return { entries: { total: statuses.length, byStatus } };
}

/** Every count of the status for people is written one way: digits grouped by commas. */
const n = formatCount;

/** The files whose remote copy the service failed to process, by name: a count alone says not which to fix. */
function failedLines(r: StatusReport): [string, string][] {
  const { files, first } = r.tracked.failed;
  if (files === 0) return [];
  const more = files > first.length ? ` and ${formatCount(files - first.length)} more` : '';
  return [['failed processing', `${first.map(printable).join(', ')}${more} (why: kbsync explain FILE; all: kbsync audit)`]];
}

/** A status item per tracked file, for the JSON document. */
function statusItem(f: StatusFile): StatusItem {
  return {
    source: f.source,
    path: f.path,
    action: f.lastAction ?? 'tracked',
    reason: f.lastReason ?? '',
    credits: 0,
    remoteId: f.remoteId,
    remoteStatus: f.remoteStatus,
    remoteChunks: f.remoteChunks ?? null,
  };
}

/** Items per chunk of statusJsonChunks: tens of KB of text, each chunk's strings dying young. */
const ITEMS_PER_CHUNK = 512;

/**
 * The JSON document of `kbsync status --json` and GET /api/status, in chunks to write one after the
 * other: the report with `items` (one per tracked file, a line each) after `summary`, written as the
 * tracked files are read (once: the counts after the items are tallied in the same pass), so that
 * a large state is never held, as objects or as one string.
 */
export function* statusJsonChunks(input: StatusInput): Generator<string> {
  const tally = new TrackedTally();
  const { summary, notConverted } = reportOf(input, tally);
  const head = JSON.stringify({ summary, ...(notConverted === undefined ? {} : { notConverted }) }, null, 2);
  yield `${head.slice(0, -2)},\n  "items": [`;
  let batch: StatusItem[] = [];
  let written = 0;
  const flush = function* (): Generator<string> {
    const text = JSON.stringify(batch).slice(1, -1).replaceAll('},{"source":', '},\n    {"source":');
    yield `${written === 0 ? '' : ','}\n    ${text}`;
    written += batch.length;
    batch = [];
  };
  for (const f of input.tracked) {
    tally.add(f);
    batch.push(statusItem(f));
    if (batch.length === ITEMS_PER_CHUNK) yield* flush();
  }
  if (batch.length > 0) yield* flush();
  const { summary: _s, notConverted: _n, ...rest } = reportOf(input, tally);
  yield `${written === 0 ? '' : '\n  '}],\n${JSON.stringify(rest, null, 2).slice(2)}\n`;
}

/** The status for people. */
export function formatStatus(r: StatusReport): string {
  const statuses = Object.entries(r.tracked.byRemoteStatus)
    .map(([s, n]) => `${formatCount(n)} ${s}`)
    .join(', ');
  const deleted = r.tracked.deleted > 0 ? `; ${formatCount(r.tracked.deleted)} deleted locally (remote copies kept)` : '';
  const last = r.lastRun;
  return fields(
    [
      ['tracked', `${plural(r.tracked.files, 'file')}${statuses === '' ? '' : ` (${statuses})`}${deleted}`],
      ...(r.entries === undefined
        ? []
        : [
            [
              'intelligence entries',
              `${formatCount(r.entries.total)} (${Object.entries(r.entries.byStatus)
                .map(([status, n]) => `${formatCount(n)} ${status}`)
                .join(', ')})`,
            ] as [string, string],
          ]),
      ['credits today', `${formatCount(r.credits.day)} of ${formatCount(r.credits.caps.day)} (UTC ${r.credits.utcDay})`],
      ['credits this month', `${formatCount(r.credits.month)} of ${formatCount(r.credits.caps.month)} (${r.credits.utcMonth})`],
      ['pending work', pendingWork(r)],
      ...failedLines(r),
      [
        'last sync',
        last === null
          ? 'never'
          : `#${last.id} ${last.status}, started ${last.startedAt}${last.finishedAt ? `, finished ${last.finishedAt}` : ''}`,
      ],
      [
        'last sync totals',
        // A killed run never wrote its totals, and a running one has not yet: zeros would be wrong.
        last?.status === 'interrupted'
          ? 'not recorded: the run did not end (what it paid is in the credits above)'
          : last?.status === 'running'
            ? 'not yet: the run is under way'
            : `${n(r.summary.uploaded)} uploaded, ${n(r.summary.unchanged)} unchanged, ${n(r.summary.renamed)} renamed, ${n(r.summary.skipped)} skipped, ${n(r.summary.deferred)} deferred, ${n(r.summary.failed)} failed; ${n(r.summary.creditsSpent)} credits spent`,
      ],
      ...(r.notConverted === undefined ? [] : [['not converted', notConvertedLine(r.notConverted)] as [string, string]]),
      ...(last?.stop == null ? [] : [['stopped spending', stopLine(last.stop)] as [string, string]]),
      ...daemonLines(r.daemon),
      ...runnerLines(r.runners),
    ],
    '',
  ).join('\n');
}

/** "2 encrypted, 1 with no text layer (no OCR), 1 damaged: `kbsync plan --all` says why for each, at no cost". */
function notConvertedLine(counts: Record<string, number>): string {
  const parts = [
    [counts['skip:encrypted'], 'encrypted'],
    [counts['skip:no-text'], 'with no text layer (kbsync does not run OCR)'],
    [counts['skip:convert-failed'], 'damaged or not what their name says'],
  ]
    .filter(([k]) => typeof k === 'number' && k > 0)
    .map(([k, what]) => `${n(k as number)} ${what as string}`);
  return `${parts.join(', ')} in the last sync, costing nothing until they change (kbsync plan says why for each)`;
}

function pendingWork(r: StatusReport): string {
  const parts: string[] = [];
  if (r.outbox.pending > 0 || r.outbox.unknown > 0)
    parts.push(`${n(r.outbox.pending)} queued, ${n(r.outbox.unknown)} awaiting reconciliation`);
  const deferred = r.daemon?.deferred;
  if (deferred != null && deferred.files > 0)
    parts.push(`${plural(deferred.files, 'file')} deferred by the budget (${deferred.waitsFor.join('; ')})`);
  return parts.length === 0 ? 'none' : parts.join('; ');
}

function runnerLines(runners: readonly RunnerStatus[] | undefined): [string, string][] {
  if (runners === undefined) return [];
  const lines: [string, string][] = [['runners', `${plural(runners.length, 'runner')} wrote to this shared state`]];
  for (const r of runners) {
    lines.push([
      `  #${r.id}`,
      `${r.host} pid ${r.pid}, sources ${r.sources === '' ? '(none)' : r.sources}, ${r.alive ? 'running' : 'ended'}; last run ${r.lastRunAt ?? 'never'} (${plural(r.runs, 'run')}); ${n(r.spent)} credits spent${r.reserved > 0 ? `, ${n(r.reserved)} reserved` : ''}`,
    ]);
  }
  return lines;
}

/** Why the last sync stopped spending, as `kbsync sync` says it on stderr. */
function stopLine(stop: { by: string; code: string; message: string }): string {
  return stop.by === 'service' ? `the service refused (${stop.code}): ${stop.message}` : stop.message;
}
