import PQueue from 'p-queue';

/** The clock of a queue's pauses; test/helpers/manual-clock.ts fits it. */
export type QueueTimers = { now(): number; schedule(fn: () => void, delayMs: number): () => void };

const realTimers: QueueTimers = {
  now: () => Date.now(),
  schedule: (fn, delayMs) => {
    const timer = setTimeout(fn, delayMs);
    return () => clearTimeout(timer);
  },
};

export type LaneResult<T> = { ran: true; value: T } | { ran: false };

/**
 * The queue every paid call of a run goes through: one concurrency and one rate for the whole run, and
 * a pause per lane. A lane is one endpoint of the service (the executor uses the op kind: upload,
 * reprocess and reindex are one endpoint each); a paused lane starts no call until its pause ends.
 */
export type PaidQueue = {
  /** The queue's clock (milliseconds since the epoch). */
  now(): number;
  /**
   * Runs `fn` when a slot, the rate and its lane allow, in `order` (lower first; by default, the order
   * of the calls to run). Aborting `signal` takes every call of it not yet started out of the queue:
   * each resolves `{ ran: false }` at once; calls already started go on.
   */
  run<T>(lane: string, fn: () => Promise<T>, o?: { signal?: AbortSignal; order?: number }): Promise<LaneResult<T>>;
  /**
   * Pauses `lane` until `untilMs` (a pause already longer stays): calls already started go on, no other
   * starts. Its calls waiting for a slot leave the queue: a paused call holds no slot and takes none of
   * the rate, and goes back in, in its order, when the lane opens.
   */
  pause(lane: string, untilMs: number): void;
};

type Entry = {
  order: number;
  fn: () => Promise<unknown>;
  signal: AbortSignal | undefined;
  settle: (r: LaneResult<unknown>) => void;
  fail: (err: unknown) => void;
  /** While the entry waits in the p-queue: aborting it takes it out (PARKED: back to its lane; STOPPED: for good). */
  inQueue: AbortController | null;
};

type Lane = { until: number; pending: OrderedEntries; queued: Set<Entry>; cancelTimer: (() => void) | null };

const PARKED = Symbol('parked until its lane opens');
const STOPPED = Symbol('stopped by its caller');

/**
 * The paid-call queue of a run: at most `concurrency` calls at once, and at most `requestsPerSecond`
 * started in any rolling second (p-queue's strict, sliding-window mode: a fixed window lets a burst
 * through at each boundary). A fractional rate above 1 is rounded down (2.5 allows 2 a second); below 1
 * it becomes one call per 1/rate seconds, rounded up.
 *
 * The calls wait in their lanes; p-queue holds at most `concurrency` of them waiting beside those
 * running, enough to keep every slot busy and few enough that a pause takes its lane's calls out
 * cheaply (removing one call from p-queue is linear in its length: 100k of them would take minutes).
 */
export function paidQueue(concurrency: number, requestsPerSecond: number, timers: QueueTimers = realTimers): PaidQueue {
  const rate =
    requestsPerSecond >= 1
      ? { interval: 1_000, intervalCap: Math.floor(requestsPerSecond) }
      : { interval: Math.ceil(1_000 / requestsPerSecond), intervalCap: 1 };
  const queue = new PQueue({ concurrency, ...rate, strict: true });
  const lanes = new Map<string, Lane>();
  const watched = new WeakSet<AbortSignal>();
  let nextOrder = 0;

  const laneOf = (name: string): Lane => {
    let lane = lanes.get(name);
    if (lane === undefined) {
      lane = { until: 0, pending: orderedEntries(), queued: new Set(), cancelTimer: null };
      lanes.set(name, lane);
    }
    return lane;
  };
  const isPaused = (lane: Lane): boolean => lane.until > timers.now();

  // A timer runs only while a paused lane has calls waiting, so none outlives the run.
  const arm = (lane: Lane): void => {
    if (lane.cancelTimer !== null || lane.pending.size === 0 || !isPaused(lane)) return;
    lane.cancelTimer = timers.schedule(() => {
      lane.cancelTimer = null;
      if (isPaused(lane)) arm(lane);
      else fill();
    }, lane.until - timers.now());
  };
  const disarm = (lane: Lane): void => {
    lane.cancelTimer?.();
    lane.cancelTimer = null;
  };

  /** Moves calls from the open lanes into p-queue, lowest order first, until it holds `concurrency` waiting. */
  const fill = (): void => {
    while (queue.size < concurrency) {
      let best: Lane | undefined;
      for (const lane of lanes.values()) {
        const head = lane.pending.peek();
        if (head === undefined || isPaused(lane)) continue;
        if (best === undefined || head.order < (best.pending.peek() as Entry).order) best = lane;
      }
      if (best === undefined) return;
      submit(best, best.pending.take() as Entry);
    }
  };

  const submit = (lane: Lane, entry: Entry): void => {
    const inQueue = new AbortController();
    entry.inQueue = inQueue;
    lane.queued.add(entry);
    queue
      .add(
        () => {
          lane.queued.delete(entry);
          entry.inQueue = null;
          // Started before the refill: the refill may start further calls at once, which come after this one.
          const running = entry.fn();
          fill();
          return running;
        },
        { signal: inQueue.signal },
      )
      .then(
        (value) => entry.settle({ ran: true, value }),
        (err: unknown) => {
          const reason: unknown = inQueue.signal.aborted ? inQueue.signal.reason : undefined;
          if (reason === STOPPED) {
            entry.settle({ ran: false });
          } else if (reason === PARKED) {
            lane.pending.put(entry);
            arm(lane);
            fill();
          } else {
            entry.fail(err);
          }
        },
      );
  };

  /** At its caller's abort, every call of `signal` not yet started resolves `{ ran: false }`. */
  const watch = (signal: AbortSignal | undefined): void => {
    if (signal === undefined || watched.has(signal)) return;
    watched.add(signal);
    signal.addEventListener(
      'abort',
      () => {
        for (const lane of lanes.values()) {
          for (const entry of lane.pending.removeWhere((e) => e.signal === signal)) entry.settle({ ran: false });
          for (const entry of [...lane.queued]) {
            if (entry.signal !== signal) continue;
            lane.queued.delete(entry);
            entry.inQueue?.abort(STOPPED);
          }
          if (lane.pending.size === 0) disarm(lane);
        }
      },
      { once: true },
    );
  };

  return {
    now: () => timers.now(),
    run<T>(name: string, fn: () => Promise<T>, o: { signal?: AbortSignal; order?: number } = {}): Promise<LaneResult<T>> {
      return new Promise<LaneResult<unknown>>((settle, fail) => {
        if (o.signal?.aborted === true) {
          settle({ ran: false });
          return;
        }
        const lane = laneOf(name);
        lane.pending.put({ order: o.order ?? nextOrder++, fn, signal: o.signal, settle, fail, inQueue: null });
        watch(o.signal);
        arm(lane);
        fill();
      }) as Promise<LaneResult<T>>;
    },
    pause(name, untilMs) {
      const lane = laneOf(name);
      if (untilMs <= lane.until) return;
      lane.until = untilMs;
      disarm(lane);
      for (const entry of [...lane.queued]) {
        lane.queued.delete(entry);
        entry.inQueue?.abort(PARKED);
      }
      arm(lane);
    },
  };
}

/** A lane's waiting calls, in order: taken from the front in O(1), put back in their place. */
type OrderedEntries = {
  readonly size: number;
  peek(): Entry | undefined;
  take(): Entry | undefined;
  put(entry: Entry): void;
  removeWhere(match: (entry: Entry) => boolean): Entry[];
};

function orderedEntries(): OrderedEntries {
  // A head index, not Array#shift: shift moves every element of a large array (100k calls: minutes).
  let items: (Entry | undefined)[] = [];
  let head = 0;
  const at = (i: number): Entry => items[i] as Entry;
  return {
    get size() {
      return items.length - head;
    },
    peek: () => items[head],
    take() {
      const entry = items[head];
      if (entry === undefined) return undefined;
      items[head++] = undefined;
      if (head === items.length) {
        items = [];
        head = 0;
      } else if (head >= 1024 && head * 2 >= items.length) {
        items = items.slice(head);
        head = 0;
      }
      return entry;
    },
    put(entry) {
      if (items.length === head || at(items.length - 1).order <= entry.order) {
        items.push(entry);
        return;
      }
      let lo = head;
      let hi = items.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (at(mid).order <= entry.order) lo = mid + 1;
        else hi = mid;
      }
      if (lo === head && head > 0) items[--head] = entry;
      else items.splice(lo, 0, entry);
    },
    removeWhere(match) {
      const removed: Entry[] = [];
      const kept: Entry[] = [];
      for (let i = head; i < items.length; i++) (match(at(i)) ? removed : kept).push(at(i));
      items = kept;
      head = 0;
      return removed;
    },
  };
}
