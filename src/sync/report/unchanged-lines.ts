import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { startWorker, workerEntry } from '../../shared/worker-entry.js';
import { unchangedReason } from '../planner/reasons.js';
import type { TrackedIndex } from '../tracked-index.js';
import type { PlanItem } from '../types.js';
import { itemJson } from './json-report.js';

const WORKER_URL = workerEntry('unchanged-lines-worker', import.meta.url);

/** Rows per batch the helper posts (a power of two: the batch of a row is a shift away). */
export const LINES_PER_BATCH = 4096;
const BATCH_SHIFT = 12;
/** Below this many tracked files the report is made faster here than a helper thread starts (~20 ms of CPU). */
export const UNCHANGED_LINES_MIN_ROWS = 20_000;
/** How often (in rows asked for) batches that have arrived are taken, while some are missing. */
const PUMP_EVERY = 512;

/** What the helper is posted once the tracked index is read: the SQLite state to read it from again. */
export type LinesRequest = { dbPath: string };
/** One batch of lines: rows start..start+count as UTF-8, row start+i at bytes offsets[i]..offsets[i+1] ('' when none). */
export type LinesBatch = { kind: 'batch'; start: number; rows: number; bytes: ArrayBuffer; offsets: Int32Array };
type LinesReply = LinesBatch | { kind: 'none'; why: string };
type Batch = { start: number; bytes: Buffer; offsets: Int32Array };

/**
 * The `--json` line of tracked row `row` as the plan prints an unchanged file, with the separator
 * that comes before every item but the first (`,\n    `); '' for a row that cannot be unchanged (no
 * remote copy, or a failed one). Made from the row alone: the observed file is the row's when the
 * plan says unchanged, but for its size, which UnchangedLines.rowOf checks.
 */
export function unchangedLine(index: TrackedIndex, row: number): string {
  const remoteId = index.remoteIdAt(row);
  const status = index.remoteStatusAt(row);
  if (remoteId === null || status === 'failed') return '';
  const item: PlanItem = {
    source: index.sourceAt(row),
    path: index.pathAt(row),
    action: 'skip:unchanged',
    reason: unchangedReason(status),
    credits: 0,
    size: index.sizeAt(row),
    sha256: index.sha256At(row),
    remoteName: index.remoteNameAt(row),
    remoteId,
    wasTracked: true,
  };
  return `,\n    ${JSON.stringify(itemJson(item, 0))}`;
}

/**
 * The `--json` lines of a large plan's unchanged files, made ahead in a helper thread. Most items
 * of a plan of a settled tree are unchanged files, and each one's line follows from its tracked
 * row alone. So, as soon as the state is read, a helper (at the lowest priority: it runs on what
 * the walk leaves idle of the second core) makes every row's line as if its file were unchanged,
 * and posts them as UTF-8 bytes. The report then copies the bytes of each unchanged item whose
 * fields are its row's (rowOf), and makes the rest itself, as before; a line not made yet is made
 * here too, so a slow or failed helper costs nothing but the check. The bytes are the same as
 * jsonReportChunks' (test/cli/json-report-lines.test.ts compares them).
 *
 * Measured on the 100k bench tree (bench/compare.ts, interleaved with rsync): see
 * docs/benchmarks.md and json-lines-report.ts.
 */
export class UnchangedLines {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #batches: (Batch | undefined)[] = [];
  #tracked: TrackedIndex | null = null;
  #generation = -1;
  #over = false;
  #nextPump = 0;
  /** The helper's row count (-1 until a batch arrives). */
  #rows = -1;

  private constructor(worker: Worker, port: MessagePort) {
    this.#worker = worker;
    this.#port = port;
  }

  /** Starts the helper; null on one core, or when it cannot start. */
  static start(cores: number = availableParallelism()): UnchangedLines | null {
    if (cores < 2 || !existsSync(fileURLToPath(WORKER_URL))) return null;
    const { port1, port2 } = new MessageChannel();
    try {
      const worker = startWorker(WORKER_URL, { workerData: { port: port2 }, transferList: [port2] });
      worker.unref();
      worker.on('error', () => {});
      return new UnchangedLines(worker, port1);
    } catch {
      port1.close();
      return null;
    }
  }

  /**
   * Has the helper read the tracked files `tracked` was just read from (the SQLite state at `dbPath`,
   * which nothing writes until the plan is printed) and make their lines; a small index is left to the report.
   */
  send(tracked: TrackedIndex, dbPath: string, minRows = UNCHANGED_LINES_MIN_ROWS): void {
    if (this.#over || this.#tracked !== null) return;
    if (tracked.size < minRows) return this.stop();
    this.#tracked = tracked;
    this.#generation = tracked.generation;
    const request: LinesRequest = { dbPath };
    this.#port.postMessage(request);
    if (process.env.PJDBG) process.stderr.write(`PJDBG sent at ${performance.now().toFixed(0)}\n`);
  }

  /**
   * The tracked row whose line is `item`'s, or -1: an unchanged item whose every printed field is
   * its row's, in the index sent (unchanged since), the line made and arrived.
   */
  rowOf(item: PlanItem, tracked: TrackedIndex): number {
    if (item.action !== 'skip:unchanged' || tracked !== this.#tracked || tracked.generation !== this.#generation) return -1;
    const row = tracked.rowOf(item.source, item.path);
    // The helper's rows are the state's; this index's are too while it has as many (nothing wrote in between).
    if (this.#rows !== -1 && this.#rows !== tracked.size) return -1;
    if (
      row < 0 ||
      item.credits !== 0 ||
      !tracked.rowHas(row, item) ||
      item.renamedFrom !== undefined ||
      item.staleRemoteId !== undefined ||
      item.deferredBy !== undefined ||
      item.reason !== unchangedReason(tracked.remoteStatusAt(row))
    )
      return -1;
    const batch = this.batchOf(row);
    return batch !== null && (batch.offsets[row - batch.start + 1] as number) > (batch.offsets[row - batch.start] as number) ? row : -1;
  }

  /** The batch holding row `row`'s line, if it has arrived. */
  batchOf(row: number): Batch | null {
    const at = row >> BATCH_SHIFT;
    let batch = this.#batches[at];
    if (batch === undefined && !this.#over && row >= this.#nextPump) {
      this.#nextPump = row + PUMP_EVERY;
      this.#pump();
      batch = this.#batches[at];
    }
    return batch ?? null;
  }

  /** Ends the helper (what it posted stays usable). */
  stop(): void {
    if (this.#over) return;
    this.#over = true;
    this.#pump();
    this.#port.close();
    void this.#worker.terminate();
  }

  #pump(): void {
    for (let m = receiveMessageOnPort(this.#port); m !== undefined; m = receiveMessageOnPort(this.#port)) {
      const reply = m.message as LinesReply;
      if (reply.kind === 'none') {
        if (process.env.PJDBG) process.stderr.write(`PJDBG none ${reply.why}\n`);
        this.#over = true;
        continue;
      }
      if (process.env.PJDBG) process.stderr.write(`PJDBG batch ${reply.start} at ${performance.now().toFixed(0)}\n`);
      this.#rows = reply.rows;
      this.#batches[reply.start >> BATCH_SHIFT] = { start: reply.start, bytes: Buffer.from(reply.bytes), offsets: reply.offsets };
    }
  }
}
