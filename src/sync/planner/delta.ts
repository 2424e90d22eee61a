import type { TrackedIndex } from '../tracked/tracked-index.js';
import type { ObservedFile } from '../types.js';
import type { UnchangedRows } from '../tracked/unchanged-rows.js';

/** What a delta plan is made of (PlanInput.delta, with the files that may have changed). */
export type Delta = {
  /** The observed files that may have changed: new, another fingerprint or content, or a row not settled. */
  files: ObservedFile[];
  /** Rows of the scope no observed file matched. */
  vanished: number[];
  /** Files left out: the same fingerprint and content as their row, whose remote copy is there and not failed. */
  unchanged: number;
  /** Of a full walk (scopeRows null): 1 for each row whose file was left out, by row number; else null. */
  unlisted: Uint8Array | null;
};

/**
 * Splits observed files (hashed as observeSources hashes them) into the few a plan must look at and
 * a count of the unchanged rest: a file is left out only when the full plan would make it a
 * `skip:unchanged` item that records nothing (the stat did not move, the remote copy is there and not
 * failed). `scopeRows`: the tracked rows the observation covers (null: every row, a full walk); those
 * no file matched are the plan's vanished rows. `walked`: the rows a full walk (scopeRows null) found
 * unchanged and left out of `files` (ScanOptions.unchanged): counted as unchanged, and matched.
 */
export function deltaOf(
  files: readonly ObservedFile[],
  tracked: TrackedIndex,
  scopeRows: readonly number[] | null,
  walked: UnchangedRows | null = null,
): Delta {
  const changed: ObservedFile[] = [];
  if (walked !== null && (scopeRows !== null || walked.seen.length !== tracked.size))
    throw new Error("deltaOf: the walk's unchanged rows are of a full walk over these very rows");
  const matched = scopeRows === null ? (walked?.seen ?? new Uint8Array(tracked.size)) : null;
  const matchedSet = scopeRows === null ? null : new Set<number>();
  // Copied before the loop marks the matched rows in `matched`, which may be walked.seen itself.
  const unlisted = scopeRows === null ? (walked?.seen.slice() ?? new Uint8Array(tracked.size)) : null;
  let unchanged = walked?.count ?? 0;
  for (let i = 0; i < files.length; i++) {
    const file = files[i] as ObservedFile;
    const row = tracked.rowOf(file.source, file.path);
    if (row >= 0) {
      if (matched !== null) matched[row] = 1;
      else matchedSet?.add(row);
      if (file.sha256 !== null && file.sha256 === tracked.sha256At(row) && tracked.settledAt(row, file)) {
        unchanged += 1;
        if (unlisted !== null) unlisted[row] = 1;
        continue;
      }
    }
    changed.push(file);
  }
  const vanished: number[] = [];
  if (matched !== null) {
    for (let row = 0; row < matched.length; row++) if (matched[row] === 0) vanished.push(row);
  } else for (const row of scopeRows as readonly number[]) if (!(matchedSet as Set<number>).has(row)) vanished.push(row);
  return { files: changed, vanished, unchanged, unlisted };
}
