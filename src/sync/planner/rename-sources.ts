import type { TrackedFile } from '../types.js';

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
