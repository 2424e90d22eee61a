import { HASH_CHUNK_BYTES, hashFileSync, type HashInput, type HashOutcome } from './hash-file.js';
import { HASH_WORKER_ENTRY, startHashWorker, type HashWorker } from './hash-thread.js';

export type { HashInput, HashOutcome } from './hash-file.js';

export type HashOptions = {
  /** Worker threads hashing at once. @default 2 */
  concurrency?: number;
  /** `auto` hashes small batches in-process (no worker start-up), larger ones in workers. @default "auto" */
  mode?: 'auto' | 'workers' | 'in-process';
  /** Test hook, for files hashed in-process: runs after a file is read and before it is stat'ed again. */
  beforeRestat?: (absPath: string) => void;
  /**
   * Test hook: what worker `index` runs instead of hash-worker.js (source text: a test makes the
   * worker crash on demand). Unset in production.
   */
  worker?: (entry: URL, index: number) => URL | string;
  /** Called as files get their outcome (hashed, deferred or unreadable), with how many just did: a progress bar's count. */
  onHashed?: (files: number) => void;
};

/**
 * Below both of these, hashing in-process beats starting workers (see inProcessPays): SHA-256 on one
 * core is fast, and for files in the page cache (as files just edited are) the workers' start-up is
 * most of what they cost, more than they save below about this many bytes. Files not in the cache read
 * faster from two threads: that costs a large change on a cold disk something, and saves a plan after
 * an edit more (the bench's plans after a small change, docs/benchmarks.md).
 */
const IN_PROCESS_MAX_BYTES = 96 << 20;
/** A batch sent to a worker: enough to amortise the message round trip, small enough to balance. */
const BATCH_MAX_FILES = 64;
const BATCH_MAX_BYTES = 4 << 20;
/**
 * Batches posted and not yet hashed, at most: a synchronous walk finds files faster than they hash,
 * and each queued batch holds its paths in the threads' message queues until its turn.
 */
const MAX_QUEUED_BATCHES = 16;
/** How long a walk waits for the threads to finish a batch before it hashes its own batch itself. */
const QUEUE_WAIT_MS = 250;

/**
 * SHA-256 of each file, keyed by absPath: a hash, or `deferred` (changed during or since the scan;
 * try again next pass), or `unreadable`. Files are read 1 MiB at a time into a reused buffer, by a
 * small pool of worker threads (largest files first) or in-process for small batches. Work a dying
 * worker leaves is finished in-process: every file gets its outcome.
 */
export async function hashFiles(files: readonly HashInput[], options: HashOptions = {}): Promise<Map<string, HashOutcome>> {
  const mode = options.mode ?? 'auto';
  const totalBytes = files.reduce((sum, f) => sum + f.size, 0);
  if (mode === 'in-process' || (mode === 'auto' && inProcessPays(files.length, totalBytes))) {
    const results = new Map<string, HashOutcome>();
    hashInProcess(files, results, options.beforeRestat, options.onHashed);
    return results;
  }
  // Largest first, each batch to the least loaded worker: the pool finishes close together.
  const hashing = startHashing({ ...options, mode: 'workers' });
  for (const file of [...files].sort((a, b) => b.size - a.size)) hashing.add(file);
  return hashing.done();
}

/**
 * Whether `auto` hashes a batch on the calling thread: only when it is small in both count and bytes.
 * A few huge files read faster from two threads, and many small ones, cold, overlap their reads there;
 * either way the caller's thread (a daemon's event loop) is not held for seconds.
 */
export function inProcessPays(fileCount: number, totalBytes: number): boolean {
  return fileCount <= STREAM_IN_PROCESS_MAX_FILES && totalBytes < IN_PROCESS_MAX_BYTES;
}

/** Files handed over as they are found, hashed meanwhile: see startHashing. */
export type Hashing = {
  /** Hands over one file: each full batch goes to a worker thread at once, while the caller goes on. */
  add(file: HashInput): void;
  /** Hashes what is left, stops the workers, and resolves with every file's outcome, keyed by absPath. */
  done(): Promise<Map<string, HashOutcome>>;
  /** Gives up (the pass failed): stops the workers, hashes nothing more. */
  cancel(): Promise<void>;
};

type PoolWorker = { worker: HashWorker; queuedBytes: number; alive: boolean };

/**
 * Below both of these, files handed to startHashing in `auto` mode are hashed in-process in done():
 * starting workers costs more than hashing that many small files in-process.
 */
const STREAM_IN_PROCESS_MAX_FILES = 1024;
// A first scan's files are read cold, and the workers overlap the walk: they start sooner.
const STREAM_IN_PROCESS_MAX_BYTES = 32 << 20;

/**
 * Hashing in a pool of worker threads, files handed over one at a time, so that a synchronous walk
 * can feed it as it goes and the hashing overlaps the walk (a first scan). Each full batch is posted
 * at once to the live worker with the fewest bytes queued. In `auto` mode files wait here until
 * there are enough to be worth the workers' start-up (else done() hashes them in-process);
 * `workers` starts the pool with the first batch, `in-process` never does.
 * A worker that dies (crash, out of memory, killed) or answers something else leaves the pool, and
 * every batch queued to it is hashed here, never by another worker: a file that kills workers cannot
 * kill them all in turn. Work added once no worker is left is hashed here too, in done().
 */
export function startHashing(options: HashOptions = {}): Hashing {
  const results = new Map<string, HashOutcome>();
  const here = (files: readonly HashInput[]): void => hashInProcess(files, results, options.beforeRestat, options.onHashed);
  let pool: PoolWorker[] | null = null;
  const answers: Promise<void>[] = [];
  const leftOver: HashInput[] = [];
  let batch: HashInput[] = [];
  let batchBytes = 0;
  let closed = false;
  let cancelled = false;
  const mode = options.mode ?? 'auto';
  // Files held back until the pool is worth starting (auto) or for good (in-process).
  let waiting: HashInput[] | null = mode === 'workers' ? null : [];
  let waitingBytes = 0;
  // Batches the threads finished, counted by them in shared memory: the walk cannot take their answers.
  const finished = new Int32Array(new SharedArrayBuffer(4));
  let posted = 0;
  // The count at which a wait last timed out: until it moves, the walk hashes its batches itself, without waiting again.
  let stalledAt = -1;

  /** Waits (blocking: the walk does not return to its event loop) until the queue has room; false: no thread finished a batch in time. */
  const roomInQueue = (): boolean => {
    for (;;) {
      const seen = Atomics.load(finished, 0);
      if (posted - seen < MAX_QUEUED_BATCHES) return true;
      if (seen === stalledAt) return false;
      if (Atomics.wait(finished, 0, seen, QUEUE_WAIT_MS) === 'timed-out') {
        stalledAt = seen;
        return false;
      }
    }
  };

  const send = (files: HashInput[], bytes: number): void => {
    pool ??= startWorkers(Math.max(1, options.concurrency ?? 2), options.worker).map((worker) => ({ worker, queuedBytes: 0, alive: true }));
    let target: PoolWorker | null = null;
    for (const w of pool) if (w.alive && (target === null || w.queuedBytes < target.queuedBytes)) target = w;
    if (target === null) {
      leftOver.push(...files);
      return;
    }
    // The threads are stuck (a slow disk, a dead thread the walk cannot hear of yet): this batch is hashed here.
    if (!roomInQueue()) return here(files);
    const to = target;
    to.queuedBytes += bytes;
    posted += 1;
    answers.push(
      hashInWorker(to.worker, files, finished).then((outcomes) => {
        to.queuedBytes -= bytes;
        if (cancelled) return; // stopping the workers failed what they held: nothing more is hashed
        if (outcomes === null) {
          // Dead or talking nonsense: whatever else it holds fails too, and is hashed here as it does.
          if (to.alive) to.worker.abandon();
          to.alive = false;
          here(files);
          return;
        }
        files.forEach((file, i) => results.set(file.absPath, outcomes[i] as HashOutcome));
        options.onHashed?.(files.length);
      }),
    );
  };

  const toBatch = (file: HashInput): void => {
    batch.push(file);
    batchBytes += file.size;
    if (batch.length >= BATCH_MAX_FILES || batchBytes >= BATCH_MAX_BYTES) {
      send(batch, batchBytes);
      batch = [];
      batchBytes = 0;
    }
  };

  return {
    add(file) {
      if (closed) throw new Error('startHashing: add() after done()');
      if (waiting === null) return toBatch(file);
      waiting.push(file);
      waitingBytes += file.size;
      if (mode === 'auto' && (waiting.length >= STREAM_IN_PROCESS_MAX_FILES || waitingBytes >= STREAM_IN_PROCESS_MAX_BYTES)) {
        const held = waiting;
        waiting = null;
        for (const f of held) toBatch(f);
      }
    },
    async cancel() {
      closed = true;
      cancelled = true;
      await Promise.all((pool ?? []).map((w) => w.worker.stop()));
    },
    async done() {
      closed = true;
      try {
        if (waiting !== null) here(waiting);
        if (batch.length > 0) send(batch, batchBytes);
        // Every answer settles (a failed batch is hashed here within it); batches posted later land in `answers` too.
        for (let i = 0; i < answers.length; i++) await answers[i];
        here(leftOver);
        return results;
      } finally {
        await Promise.all((pool ?? []).map((w) => w.worker.stop()));
      }
    },
  };
}

/** Hashes `files` on this thread, one reused buffer. */
function hashInProcess(
  files: readonly HashInput[],
  results: Map<string, HashOutcome>,
  beforeRestat?: (absPath: string) => void,
  onHashed?: (files: number) => void,
): void {
  const buf = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  for (const file of files) {
    results.set(file.absPath, hashFileSync(file, buf, beforeRestat));
    onHashed?.(1);
  }
}

/** Up to `count` started workers: a thread that cannot start is one fewer (none: all in-process). */
function startWorkers(count: number, code: HashOptions['worker']): HashWorker[] {
  const workers: HashWorker[] = [];
  for (let i = 0; i < count; i++) {
    try {
      workers.push(startHashWorker(code?.(HASH_WORKER_ENTRY, i) ?? HASH_WORKER_ENTRY));
    } catch {
      // Hashing goes on with the workers that did start.
    }
  }
  return workers;
}

/** The worker's outcomes, one per file in order, or null when it died or did not answer each file. */
async function hashInWorker(worker: HashWorker, batch: readonly HashInput[], finished: Int32Array): Promise<HashOutcome[] | null> {
  try {
    const outcomes = await worker.hashBatch(batch, finished);
    return outcomes.length === batch.length ? outcomes : null;
  } catch {
    return null;
  }
}
