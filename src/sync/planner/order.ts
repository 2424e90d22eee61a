import { KbsyncError } from '../../shared/errors.js';
import type { PlanItem } from '../types.js';
import { compareByPath } from './keys.js';

/**
 * The plan's items in source/path order. `bulk` holds one item per observed file in observation
 * order; when that order was already sorted (the usual case) the few extras are inserted by binary
 * search instead of re-sorting 100k items. Two items for one path mean a source reported a file
 * twice: a bug upstream, refused here rather than planned.
 */
export function orderItems(bulk: PlanItem[], bulkSorted: boolean, extra: PlanItem[]): PlanItem[] {
  extra.sort(compareByPath);
  if (!bulkSorted) {
    const all = bulk.concat(extra).sort(compareByPath);
    checkUnique(all);
    return all;
  }
  checkUnique(extra);
  if (extra.length === 0) return bulk;
  const out: PlanItem[] = [];
  let from = 0;
  for (const item of extra) {
    const at = lowerBound(bulk, item, from);
    if (at < bulk.length && compareByPath(bulk[at] as PlanItem, item) === 0) throw duplicate(item);
    for (let i = from; i < at; i++) out.push(bulk[i] as PlanItem);
    out.push(item);
    from = at;
  }
  for (let i = from; i < bulk.length; i++) out.push(bulk[i] as PlanItem);
  return out;
}

/** The first index >= `from` whose item is not before `x`. */
function lowerBound(items: readonly PlanItem[], x: PlanItem, from: number): number {
  let lo = from;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareByPath(items[mid] as PlanItem, x) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function checkUnique(sorted: readonly PlanItem[]): void {
  for (let i = 1; i < sorted.length; i++) {
    if (compareByPath(sorted[i - 1] as PlanItem, sorted[i] as PlanItem) === 0) throw duplicate(sorted[i] as PlanItem);
  }
}

function duplicate(item: PlanItem): KbsyncError {
  return new KbsyncError('internal', `a source reported ${item.source}/${item.path} twice`);
}
