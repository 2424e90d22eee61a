import { KbsyncError } from '../../shared/errors.js';
import type { PlanItem } from '../types.js';
import { trackedKey } from './keys.js';

/**
 * The plan's items in source/path order, compared by key (`source\0path` orders exactly like
 * source-then-path since "\0" sorts first). The bulk (one item per observed file, in observation
 * order, with its keys alongside) is usually sorted already: it is checked in O(n) and merged with
 * the few extras instead of re-sorted. Two items for one path mean a source reported a file twice:
 * a bug upstream, refused here rather than planned.
 */
export function mergeByKey(bulk: PlanItem[], bulkKeys: readonly string[], extra: readonly PlanItem[]): PlanItem[] {
  const extraKeyed = extra.map((item) => ({ key: trackedKey(item.source, item.path), item })).sort((a, b) => cmp(a.key, b.key));
  checkUnique(extraKeyed.map((e) => e.key));
  if (!isSortedUnique(bulkKeys)) {
    const all = bulk.map((item, i) => ({ key: bulkKeys[i] as string, item })).concat(extraKeyed).sort((a, b) => cmp(a.key, b.key));
    checkUnique(all.map((e) => e.key));
    return all.map((e) => e.item);
  }
  if (extraKeyed.length === 0) return bulk;
  const out = new Array<PlanItem>(bulk.length + extraKeyed.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < bulk.length && j < extraKeyed.length) {
    const a = bulkKeys[i] as string;
    const b = extraKeyed[j] as { key: string; item: PlanItem };
    if (a === b.key) throw duplicate(a);
    if (a < b.key) out[k++] = bulk[i++] as PlanItem;
    else {
      out[k++] = b.item;
      j++;
    }
  }
  while (i < bulk.length) out[k++] = bulk[i++] as PlanItem;
  while (j < extraKeyed.length) out[k++] = (extraKeyed[j++] as { item: PlanItem }).item;
  return out;
}

/** True when strictly increasing; throws on two equal neighbours; false at the first descent. */
function isSortedUnique(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) {
    const a = keys[i - 1] as string;
    const b = keys[i] as string;
    if (a === b) throw duplicate(a);
    if (a > b) return false;
  }
  return true;
}

function checkUnique(sortedKeys: readonly string[]): void {
  for (let i = 1; i < sortedKeys.length; i++) if (sortedKeys[i - 1] === sortedKeys[i]) throw duplicate(sortedKeys[i] as string);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function duplicate(key: string): KbsyncError {
  return new KbsyncError('internal', `a source reported ${key.replace('\0', '/')} twice`);
}
