import type { TrackedIndex } from '../tracked-index.js';
import type { Fingerprint } from '../tracked-columns.js';
import type { ObservedFile } from '../types.js';

/** What a delta plan is made of (PlanInput.delta, with the files that may have changed). */
export type Delta = {
  /** The observed files that may have changed: new, another fingerprint or content, or a row not settled. */
  files: ObservedFile[];
  /** Rows of the scope no observed file matched. */
  vanished: number[];
  /** Files left out: the same fingerprint and content as their row, whose remote copy is there and not failed. */
  unchanged: number;
};

/** Splits observed files into a delta; may be told of files left out while walking first (drop). */
export type DeltaCounter = {
  /**
   * True (and the file counted as unchanged) when its stat fingerprint is its row's and the row's
   * remote copy is there and not failed: nothing about it needs observing, hashing or planning.
   */
  drop(file: Fingerprint & { source: string; path: string }): boolean;
  /** The delta of the files not dropped, with the vanished rows of the scope (null: every row). */
  split(files: readonly ObservedFile[], scopeRows: readonly number[] | null): Delta;
};

/**
 * The split of a delta plan: a file is left out only when the full plan would make it a `skip:unchanged`
 * item that records nothing (the stat did not move, the remote copy is there and not failed); every other
 * file is planned. Rows of the scope that no file matched, dropped or not, are the vanished rows.
 * `everyRow`: the scope is every row (a full walk), marked in a byte per row; else a set.
 */
export function deltaCounter(tracked: TrackedIndex, everyRow: boolean): DeltaCounter {
  const matched = everyRow ? new Uint8Array(tracked.size) : null;
  const matchedSet = everyRow ? null : new Set<number>();
  let unchanged = 0;
  const mark = (row: number): void => {
    if (matched !== null) matched[row] = 1;
    else matchedSet?.add(row);
  };
  const settled = (row: number): boolean => tracked.remoteIdAt(row) !== null && tracked.remoteStatusAt(row) !== 'failed';
  return {
    drop(file) {
      const row = tracked.rowOf(file.source, file.path);
      if (row < 0 || !tracked.sameStat(row, file) || !settled(row)) return false;
      mark(row);
      unchanged += 1;
      return true;
    },
    split(files, scopeRows) {
      const changed: ObservedFile[] = [];
      for (let i = 0; i < files.length; i++) {
        const file = files[i] as ObservedFile;
        const row = tracked.rowOf(file.source, file.path);
        if (row >= 0) {
          mark(row);
          if (file.sha256 !== null && file.sha256 === tracked.sha256At(row) && tracked.sameStat(row, file) && settled(row)) {
            unchanged += 1;
            continue;
          }
        }
        changed.push(file);
      }
      const vanished: number[] = [];
      if (matched !== null) {
        for (let row = 0; row < matched.length; row++) if (matched[row] === 0) vanished.push(row);
      } else for (const row of scopeRows ?? []) if (!(matchedSet as Set<number>).has(row)) vanished.push(row);
      return { files: changed, vanished, unchanged };
    },
  };
}

/**
 * Splits observed files (hashed as observeSources hashes them) into the few a plan must look at and a
 * count of the unchanged rest (see deltaCounter). `scopeRows`: the tracked rows the observation covers
 * (null: every row, a full walk); those no file matched are the plan's vanished rows.
 */
export function deltaOf(files: readonly ObservedFile[], tracked: TrackedIndex, scopeRows: readonly number[] | null): Delta {
  return deltaCounter(tracked, scopeRows === null).split(files, scopeRows);
}
