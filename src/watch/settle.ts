import { lstatSync, readdirSync } from 'node:fs';
import type { BurstScope } from './burst.js';

/** How many debounce periods a burst's cycle waits at most for its new folders to settle. */
const SETTLE_MAX_WAIT_DEBOUNCES = 20;

/**
 * Whether a burst's cycle must wait: files written into a folder just made, before @parcel/watcher
 * watches it, have no event of their own, so the debounce, which only sees events, may end while they
 * are still being written (a test saw 70 of 1,000 files left to the hourly rescan). The check looks at
 * the newest time under each folder the burst names whole (a folder made or moved in): when something
 * there is newer than debounceMs, it returns that time, and the daemon puts the burst back and arms its
 * cycle debounceMs after it: one plan for the whole burst, once it is quiet. Null: go on. A folder that
 * never settles (a clock ahead, a process writing on) is waited for at most SETTLE_MAX_WAIT_DEBOUNCES
 * debounces in a row, then synced as it is.
 */
export function createSettleWait(o: {
  debounceMs: number;
  /** Each folder source's root (real path), by name. */
  roots: ReadonlyMap<string, string>;
  /** Paths the daemon ignores (its own files): left out. */
  ignored: (absPath: string) => boolean;
}): (scope: NonNullable<BurstScope>, nowMs: number) => number | null {
  // When the cycles of this burst began waiting (null: they do not wait).
  let since: number | null = null;
  return (scope, nowMs) => {
    let newest = Number.NEGATIVE_INFINITY;
    for (const [name, dirs] of scope) {
      const root = o.roots.get(name);
      if (root === undefined) continue;
      for (const d of dirs)
        if (!d.direct && d.dir !== '') newest = Math.max(newest, newestChangeUnder(`${root}/${d.dir}`, nowMs, o.ignored));
    }
    const waited = since === null ? 0 : nowMs - since;
    if (newest <= nowMs - o.debounceMs || waited >= SETTLE_MAX_WAIT_DEBOUNCES * o.debounceMs) {
      since = null;
      return null;
    }
    since ??= nowMs;
    return newest;
  };
}

/** Folders never looked into (as the walk never descends into them). */
const NEVER = new Set(['.git', 'node_modules']);

/**
 * The latest modification time (ms since the epoch) of `absDir` and of every file and folder below
 * it, symbolic links not followed, `ignored` paths (kbsync's own files) left out; times ahead of
 * `nowMs` (a network mount's clock) are left out too, and what cannot be read counts as nothing. For a folder a burst named (one just made or moved in): files
 * written into it while @parcel/watcher was not yet watching it have no event of their own
 * (parcel-bundler/watcher#243), so only their times say whether the folder is still being written.
 */
export function newestChangeUnder(absDir: string, nowMs: number, ignored: (absPath: string) => boolean = () => false): number {
  let newest = Number.NEGATIVE_INFINITY;
  const take = (mtimeMs: number): void => {
    if (mtimeMs <= nowMs && mtimeMs > newest) newest = mtimeMs;
  };
  const visit = (dir: string): void => {
    let names: string[];
    try {
      const st = lstatSync(dir, { throwIfNoEntry: false });
      if (st === undefined || !st.isDirectory()) return;
      take(st.mtimeMs);
      names = readdirSync(dir);
    } catch {
      return; // gone or unreadable: the cycle's walk reports what it cannot read
    }
    for (const name of names) {
      const abs = `${dir}/${name}`;
      if (NEVER.has(name) || ignored(abs)) continue;
      let st;
      try {
        st = lstatSync(abs, { throwIfNoEntry: false });
      } catch {
        continue;
      }
      if (st === undefined) continue;
      if (st.isDirectory()) visit(abs);
      else take(st.mtimeMs);
    }
  };
  visit(absDir);
  return newest;
}
