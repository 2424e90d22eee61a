import type { TrackedFile } from '../types.js';
import { compareByPath } from './keys.js';

/** Tracked rows whose path no source saw (neither as a file nor as a skipped path), sorted by source and path. */
export function findVanished(tracked: ReadonlyMap<string, TrackedFile>, present: ReadonlySet<string>): TrackedFile[] {
  const gone: TrackedFile[] = [];
  for (const [key, t] of tracked) if (!present.has(key)) gone.push(t);
  return gone.sort(compareByPath);
}

/** Vanished rows whose content can move to a new path: in the dataset and not failed, queued by sha256 in path order. */
export function renameSources(vanished: readonly TrackedFile[]): Map<string, TrackedFile[]> {
  const bySha = new Map<string, TrackedFile[]>();
  for (const t of vanished) {
    if (t.remoteId === null || t.remoteStatus === 'failed') continue;
    const queue = bySha.get(t.sha256);
    if (queue === undefined) bySha.set(t.sha256, [t]);
    else queue.push(t);
  }
  return bySha;
}
