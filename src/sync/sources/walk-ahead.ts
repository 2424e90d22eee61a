import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { availableParallelism } from 'node:os';
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { CONVERT_TYPES, extensionOf, SUPPORTED_EXTENSIONS } from '../../shared/file-types.js';
import { startWorker, workerEntry } from '../../shared/worker-entry.js';

/** An entry's kind in a Listing (as readdir's file types tell it; 0: anything else). */
export const ENTRY_FILE = 1;
export const ENTRY_DIR = 2;
export const ENTRY_LINK = 3;

/** A folder's entries as the helper listed them, in walk order (a folder sorts as "name/"). */
export type Listing = {
  /** The listing's number, in the helper's walk order. */
  k: number;
  names: string[];
  /** Per name, ENTRY_FILE, ENTRY_DIR, ENTRY_LINK, or 0 for anything else. */
  kinds: Uint8Array;
};

export type WalkAheadOptions = {
  /** Cores to count on: with one, no helper is started (it would only take turns with the walk). @default os.availableParallelism() */
  cores?: number;
  /** Test hook: what the helper runs instead of walk-ahead-worker.js (source text: a test makes it stall, crash or lag). */
  helper?: (entry: URL) => URL | string;
  /** How long the walk waits for a helper that posts nothing at all before doing the rest itself. @default 2000 */
  stallMs?: number;
};

/**
 * readdir's entries as names and kinds (ENTRY_*) in walk order: sorted so that the walk emits paths
 * in plain string order (a folder sorts as "name/"), and the planner gets its input already
 * ordered. A folder's key only differs from its name where a sibling's name extends it ("a" beside
 * "a.md"); folders with no subfolder (most of them) sort by name alone, with no key built.
 * The walk and the helper both list with it, so they cannot order differently.
 */
export function listingOf(entries: Dirent[]): { names: string[]; kinds: Uint8Array } {
  const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const sorted = !entries.some((e) => e.isDirectory())
    ? entries.sort(byName)
    : entries
        .map((e) => ({ e, name: e.isDirectory() ? `${e.name}/` : e.name }))
        .sort(byName)
        .map(({ e }) => e);
  const names = new Array<string>(sorted.length);
  const kinds = new Uint8Array(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    const e = sorted[i] as Dirent;
    names[i] = e.name;
    kinds[i] = e.isFile() ? ENTRY_FILE : e.isDirectory() ? ENTRY_DIR : e.isSymbolicLink() ? ENTRY_LINK : 0;
  }
  return { names, kinds };
}

/** Folders the helper never lists (the walk never descends them either: see folder.ts). */
const NEVER_LISTED = ['.git', 'node_modules'];

/** What the helper posts: a folder's listing (k -1: it could not be read), the lstats of a listing's files, or the end of its walk. */
type Message =
  | { kind: 'listing'; dir: string; k: number; names: string; kinds: Uint8Array }
  | { kind: 'stats'; k: number; stats: Float64Array }
  | { kind: 'end'; listed?: number; error?: string };

/** What the helper is given (workerData of walk-ahead-worker.ts). */
export type HelperData = {
  port: MessagePort;
  ctl: Int32Array;
  claims: Uint8Array;
  roots: readonly string[];
  extensions: readonly string[];
  neverListed: readonly string[];
};

/**
 * The helper's thread (walk-ahead-worker.ts): tells the walk when it ends, however it ends (an
 * error included), then walks. ctl[2] says so: the walk, blocked in Atomics.wait, sees no event.
 */
export function helpWalk(d: HelperData): void {
  signalExit(d.ctl);
  walkAhead(d);
}

/** Sets ctl[2] (and wakes the walk) when this thread exits. */
export function signalExit(ctl: Int32Array): void {
  process.on('exit', () => {
    Atomics.store(ctl, 2, 1);
    Atomics.notify(ctl, 0);
  });
}

/**
 * The helper's walk: each root depth first in walk
 * order, posting each folder's listing as soon as it is read, and the lstats of the files of a
 * supported type of each listing it claims. It lists a few folders ahead of its lstats, so that a
 * walk that caught up can claim a listed folder's lstats (claims[k]: 0 free, 1 the helper's, 2 the
 * walk's) and do them while the helper lists and stats the next ones. Stats are (size, mtimeMs,
 * ino) per entry, NaN where an entry was not lstat'ed or is not a regular file. The walk tells it
 * which folders of the root it walks it left out ({ root, skip }): nothing more is read under them.
 * While the walk waits for a listing (ctl[3] set), the helper lists next rather than stat: the
 * folder it waits for is the next in walk order. Stops when ctl[1] is set; ctl[0] counts the
 * messages posted, and is notified after each.
 */
function walkAhead({ port, ctl, claims, roots, extensions, neverListed }: HelperData): void {
  const supported = new Set(extensions);
  const never = new Set(neverListed);
  const post = (message: unknown, transfer: ArrayBuffer[] = []): void => {
    port.postMessage(message, transfer);
    Atomics.add(ctl, 0, 1);
    Atomics.notify(ctl, 0);
  };
  /** Listed folders whose lstats are not done yet, oldest first, and how many files they hold. */
  let listed: { k: number; dir: string; names: string[]; kinds: Uint8Array }[] = [];
  let listedFiles = 0;
  let stack: string[] = [];
  /** Drops the folders the walk left out (and everything under them) from what is left to do. */
  const dropSkipped = (r: number): void => {
    const skipped: string[] = [];
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
      const { root, skip } = m.message as { root: number; skip: string };
      if (root === r) skipped.push(skip);
    }
    if (skipped.length === 0) return;
    const kept = (dir: string): boolean => !skipped.some((s) => dir === s || dir.startsWith(`${s}/`));
    stack = stack.filter(kept);
    listed = listed.filter((l) => {
      if (kept(l.dir)) return true;
      listedFiles -= l.names.length; // never claimed: the walk, which left them out, never asks
      return false;
    });
  };
  const statOldest = (): void => {
    const { k, dir, names, kinds } = listed.shift() as (typeof listed)[number];
    listedFiles -= names.length;
    if (k >= claims.length || Atomics.compareExchange(claims, k, 0, 1) !== 0) return; // the walk took them
    const stats = new Float64Array(names.length * 3).fill(Number.NaN);
    for (let i = 0; i < names.length; i++) {
      if (kinds[i] !== ENTRY_FILE) continue;
      const name = names[i] as string;
      if (!supported.has(extensionOf(name))) continue;
      try {
        const st = lstatSync(`${dir}/${name}`, { throwIfNoEntry: false });
        if (st === undefined || !st.isFile()) continue;
        stats[i * 3] = st.size;
        stats[i * 3 + 1] = st.mtimeMs;
        stats[i * 3 + 2] = st.ino;
      } catch {
        // left NaN: the walk lstats it and reports the error
      }
    }
    post({ kind: 'stats', k, stats }, [stats.buffer]);
  };
  try {
    let next = 0;
    for (let r = 0; r < roots.length; r++) {
      stack = [roots[r] as string];
      while (stack.length > 0 || listed.length > 0) {
        if (Atomics.load(ctl, 1) !== 0) return post({ kind: 'end', listed: next });
        dropSkipped(r);
        if (stack.length === 0 && listed.length === 0) break;
        if (stack.length === 0 || (listed.length > 0 && listedFiles >= 512 && Atomics.load(ctl, 3) === 0)) {
          statOldest();
          continue;
        }
        const dir = stack.pop() as string;
        let entries: Dirent[];
        try {
          entries = readdirSync(dir, { withFileTypes: true });
        } catch {
          post({ kind: 'listing', dir, k: -1 }); // the walk reads it itself, and reports why it cannot
          continue;
        }
        const { names, kinds } = listingOf(entries);
        for (let i = names.length - 1; i >= 0; i--)
          if (kinds[i] === ENTRY_DIR && !never.has(names[i] as string)) stack.push(`${dir}/${names[i]}`);
        const k = next++;
        const sent = kinds.slice();
        post({ kind: 'listing', dir, k, names: names.join('/'), kinds: sent }, [sent.buffer]);
        listed.push({ k, dir, names, kinds });
        listedFiles += names.length;
      }
    }
    post({ kind: 'end', listed: next });
  } catch (err) {
    post({ kind: 'end', error: err instanceof Error ? err.message : String(err) });
  }
}

/** The helper's entry module: helpWalk on its workerData. */
const HELPER_ENTRY = workerEntry('walk-ahead-worker', import.meta.url);

/** Listings whose lstats a walk can claim (one byte each, shared); later ones are lstat'ed by the walk. */
const CLAIMS = 1 << 18;

/**
 * A helper thread that walks folder sources ahead of the walk: started before the state is read
 * (on two cores the second one idles meanwhile), it reads the folders and lstats their files in
 * the walk's order, and the walk takes each folder's listing and lstats from it instead of making
 * the calls itself. Where the walk catches up, it claims the lstats of folders the helper listed
 * but has not stat'ed yet, so both threads stay busy to the end. The walk tells the helper which
 * folders it leaves out (ignored, excluded, outside the include globs), so that the helper does not
 * hold it up walking them.
 *
 * The helper decides nothing: it lists every folder but `.git` and `node_modules`, and the walk
 * applies every rule (ignore files, globs, secrets, links) to what it is given, as to what readdir
 * gives. The walk asks only for folders the helper will list (roots, and folders of its listings);
 * anything else, a folder the helper could not read, a helper that died (its exit is seen at once),
 * stalled or stopped, and the walk does the work itself. What the walk reports is what it would
 * find alone, as of the helper's pass: a file made or removed since (the helper starts before the
 * state read) is seen by the next pass, as a change made during a walk is.
 */
export class WalkAhead {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #ctl: Int32Array;
  readonly #claims: Uint8Array;
  readonly #stallMs: number;
  /** The roots the helper walks, in order (each once). */
  readonly #roots: readonly string[];
  readonly #listings = new Map<string, Listing | null>();
  readonly #stats = new Map<number, Float64Array>();
  #ended = false;
  /**
   * Listings and stats the walk took from the helper, listings whose lstats it claimed, and the
   * folders the helper listed in all (once it has ended): diagnostics, and tests that must see it work.
   */
  taken = { listings: 0, stats: 0, claimed: 0, helperListed: 0 };

  private constructor(worker: Worker, port: MessagePort, ctl: Int32Array, claims: Uint8Array, stallMs: number, roots: readonly string[]) {
    this.#worker = worker;
    this.#port = port;
    this.#ctl = ctl;
    this.#claims = claims;
    this.#stallMs = stallMs;
    this.#roots = roots;
  }

  /** Starts a helper over these folder roots (absolute, as the walk is given them); null on one core, or if no worker can start. */
  static start(roots: readonly string[], options: WalkAheadOptions = {}): WalkAhead | null {
    const unique = [...new Set(roots)];
    if ((options.cores ?? availableParallelism()) < 2 || unique.length === 0) return null;
    const ctl = new Int32Array(new SharedArrayBuffer(16));
    const claims = new Uint8Array(new SharedArrayBuffer(CLAIMS));
    const { port1, port2 } = new MessageChannel();
    const code = options.helper?.(HELPER_ENTRY) ?? HELPER_ENTRY;
    try {
      const data: HelperData = {
        port: port2,
        ctl,
        claims,
        roots: unique,
        extensions: [...SUPPORTED_EXTENSIONS, ...CONVERT_TYPES],
        neverListed: NEVER_LISTED,
      };
      const worker = startWorker(code, { workerData: data, transferList: [port2] });
      worker.unref();
      // The walk learns of a helper's end through ctl (it never returns to the event loop while walking).
      worker.on('error', () => {});
      return new WalkAhead(worker, port1, ctl, claims, options.stallMs ?? 2000, unique);
    } catch {
      port1.close();
      return null;
    }
  }

  /** True when the helper walks this root (a walk of any other root must not ask it for listings). */
  lists(root: string): boolean {
    return this.#roots.includes(root);
  }

  /** Tells the helper that the walk of `root` leaves `dir` out: it reads nothing more under it. */
  skipped(root: string, dir: string): void {
    if (!this.#ended) this.#port.postMessage({ root: this.#roots.indexOf(root), skip: dir });
  }

  /** True once the helper has walked everything, or stopped (what it posted is taken). */
  finished(): boolean {
    this.#pump();
    return this.#ended;
  }

  /**
   * The helper's listing of `dir` (a root it was given, or a folder of one of its listings), waiting
   * for it if the helper has yet to get there; null when the walk must read the folder itself.
   */
  listing(dir: string): Listing | null {
    if (!this.#listings.has(dir)) {
      // While the walk waits, the helper lists before it stats (see walkAhead).
      Atomics.store(this.#ctl, 3, 1);
      this.#await(() => this.#listings.has(dir));
      Atomics.store(this.#ctl, 3, 0);
    }
    const found = this.#listings.get(dir);
    this.#listings.delete(dir);
    if (found === undefined || found === null) return null;
    this.taken.listings++;
    return found;
  }

  /**
   * Who lstats the listing's files of a supported type: the stats when the helper posted them,
   * (size, mtimeMs, ino) per entry, NaN where there is none (not a regular file, gone, failed);
   * 'walk' when the walk just claimed them (the helper had not started on them: lstat them there);
   * 'helper' when the helper has them in hand (take them later with statsOf, not waiting now).
   */
  claimStats(listing: Listing): Float64Array | 'walk' | 'helper' {
    const { k } = listing;
    this.#pump();
    const stats = this.#takeStats(k);
    if (stats !== undefined) return stats;
    if (this.#ended || k >= this.#claims.length || Atomics.compareExchange(this.#claims, k, 0, 2) === 0) {
      this.taken.claimed++;
      return 'walk';
    }
    return 'helper';
  }

  /** The stats of a listing claimStats left to the helper, waiting for them; null if it never posts them (lstat them then). */
  statsOf(listing: Listing): Float64Array | null {
    return this.#await(() => this.#stats.has(listing.k)) ? (this.#takeStats(listing.k) as Float64Array) : null;
  }

  #takeStats(k: number): Float64Array | undefined {
    const stats = this.#stats.get(k);
    if (stats === undefined) return undefined;
    this.#stats.delete(k);
    this.taken.stats++;
    return stats;
  }

  /** Stops the helper (it may be mid-folder: it stops at the next one). */
  stop(): void {
    if (!this.#ended) this.#end();
  }

  #end(): void {
    this.#ended = true;
    Atomics.store(this.#ctl, 1, 1);
    this.#port.close();
    void this.#worker.terminate();
  }

  /** Takes whatever the helper has posted so far (never waits). */
  #pump(): void {
    if (this.#ended) return;
    for (let m = receiveMessageOnPort(this.#port); m !== undefined; m = receiveMessageOnPort(this.#port)) {
      const message = m.message as Message;
      if (message.kind === 'listing') {
        this.#listings.set(
          message.dir,
          message.k < 0 ? null : { k: message.k, names: message.names === '' ? [] : message.names.split('/'), kinds: message.kinds },
        );
      } else if (message.kind === 'stats') {
        this.#stats.set(message.k, message.stats);
      } else {
        this.taken.helperListed = message.listed ?? 0;
        this.#end();
        return;
      }
    }
  }

  /** Takes the helper's messages until `has()` holds (true), or the helper ended or stalled (false). */
  #await(has: () => boolean): boolean {
    let posted = Atomics.load(this.#ctl, 0);
    let quietSince = performance.now();
    for (;;) {
      // Read before the messages are taken: a helper that exits posted all it ever will before.
      const exited = Atomics.load(this.#ctl, 2) === 1;
      this.#pump();
      if (has()) return true;
      if (this.#ended) return false;
      const now = performance.now();
      if (exited || now - quietSince > this.#stallMs) {
        this.#end();
        return false;
      }
      Atomics.wait(this.#ctl, 0, posted, 20);
      const seen = Atomics.load(this.#ctl, 0);
      if (seen !== posted) {
        posted = seen;
        quietSince = performance.now();
      }
    }
  }
}
