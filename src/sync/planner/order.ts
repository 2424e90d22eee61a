import { KbsyncError } from '../../shared/errors.js';
import type { PlanItem } from '../types.js';
import { compareByPath, lowerBoundFrom } from '../tracked/keys.js';

/**
 * The plan's items in source/path order. `bulk` holds one item per observed file in observation
 * order; when that order was already sorted (the usual case) the few extras are merged in, one
 * pass over both lists, instead of re-sorting 100k items. Two items for one path mean a source
 * reported a file twice: a bug upstream, refused here rather than planned. `extrasInOrder`: the
 * caller knows the extras are strictly increasing by (source, path), so that is not checked again.
 */
export function orderItems(bulk: PlanItem[], bulkSorted: boolean, extras: PlanItem[], extrasInOrder = false): PlanItem[] {
  const { items: extra, unique } = extrasInOrder ? { items: extras, unique: true } : sortRuns(extras);
  if (!bulkSorted) {
    const all = bulk.concat(extra).sort(compareByPath);
    checkUnique(all);
    return all;
  }
  if (!unique) checkUnique(extra);
  if (extra.length === 0) return bulk;
  const out = new Array<PlanItem>(bulk.length + extra.length);
  let b = 0;
  let e = 0;
  let o = 0;
  while (e < extra.length) {
    const x = extra[e] as PlanItem;
    // The bulk items before the next extra: a short run (extras spread through the bulk, as skipped
    // files are among the others) is walked, one comparison per item; past LINEAR_STEPS the rest of
    // a long run is searched and copied without a comparison each.
    let c = b < bulk.length ? compareByPath(bulk[b] as PlanItem, x) : 1;
    for (let steps = 0; c < 0; steps++) {
      if (steps === LINEAR_STEPS) {
        const at = lowerBoundFrom(bulk.length, b, (i) => compareByPath(bulk[i] as PlanItem, x) < 0);
        while (b < at) out[o++] = bulk[b++] as PlanItem;
      } else {
        out[o++] = bulk[b++] as PlanItem;
      }
      c = b < bulk.length ? compareByPath(bulk[b] as PlanItem, x) : 1;
    }
    if (c === 0) throw duplicate(x);
    out[o++] = x;
    e += 1;
  }
  while (b < bulk.length) out[o++] = bulk[b++] as PlanItem;
  return out;
}

/**
 * Bulk items walked one by one before the next extra, before the rest of the run is searched for:
 * when extras are many (a tree with many skipped files), the next one is usually a few bulk items on,
 * found sooner by a short walk than by a search; with few extras it makes no difference.
 */
const LINEAR_STEPS = 8;

/** Most sorted runs merged rather than sorted: the extras are a few runs (skip entries, decided candidates, vanished paths), each sorted. */
const MAX_MERGED_RUNS = 8;

/**
 * `items` sorted by path. They are usually a few sorted runs one after the other; those are merged
 * pairwise (linear) instead of sorted (a cold first scan has an extra per file: a sort is costly).
 * `unique`: true when they came strictly increasing (no path twice: nothing left to check).
 */
function sortRuns(items: PlanItem[]): { items: PlanItem[]; unique: boolean } {
  const starts = [0];
  let unique = true;
  for (let i = 1; i < items.length; i++) {
    const c = compareByPath(items[i - 1] as PlanItem, items[i] as PlanItem);
    if (c > 0) starts.push(i);
    else if (c === 0) unique = false;
  }
  if (starts.length === 1) return { items, unique };
  if (starts.length > MAX_MERGED_RUNS) return { items: items.sort(compareByPath), unique: false };
  let runs = starts.map((start, r) => items.slice(start, starts[r + 1] ?? items.length));
  while (runs.length > 1) {
    const next: PlanItem[][] = [];
    for (let r = 0; r < runs.length; r += 2)
      next.push(r + 1 < runs.length ? merge(runs[r] as PlanItem[], runs[r + 1] as PlanItem[]) : (runs[r] as PlanItem[]));
    runs = next;
  }
  return { items: runs[0] as PlanItem[], unique: false };
}

/** Two sorted lists as one (stable: on ties, `a` first; ties are refused later as duplicates). */
function merge(a: readonly PlanItem[], b: readonly PlanItem[]): PlanItem[] {
  const out = new Array<PlanItem>(a.length + b.length);
  let i = 0;
  let j = 0;
  let o = 0;
  while (i < a.length && j < b.length)
    out[o++] = compareByPath(b[j] as PlanItem, a[i] as PlanItem) < 0 ? (b[j++] as PlanItem) : (a[i++] as PlanItem);
  while (i < a.length) out[o++] = a[i++] as PlanItem;
  while (j < b.length) out[o++] = b[j++] as PlanItem;
  return out;
}

function checkUnique(sorted: readonly PlanItem[]): void {
  for (let i = 1; i < sorted.length; i++) {
    if (compareByPath(sorted[i - 1] as PlanItem, sorted[i] as PlanItem) === 0) throw duplicate(sorted[i] as PlanItem);
  }
}

function duplicate(item: PlanItem): KbsyncError {
  return new KbsyncError('internal', `a source reported ${item.source}/${item.path} twice`);
}
