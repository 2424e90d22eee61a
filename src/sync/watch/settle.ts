import { lstatSync, readdirSync } from 'node:fs';

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
