import { subscribe, type AsyncSubscription } from '@parcel/watcher';
import { createChokidarWatcher } from './chokidar-watcher.js';
import type { CreateWatcher, FolderWatcher } from './watcher.js';

/**
 * The @parcel/watcher backend: a native watcher that watches folders, not files (inotify: one watch per
 * folder; FSEvents and ReadDirectoryChangesW: one per tree), so a 100k-file tree is watched in well under
 * a second with little memory (figures in docs/benchmarks.md). It has no stat polling: `backend:
 * polling` is chokidar's. Like every backend it only gives hints; a dropped event (an inotify queue
 * overflow, a create in a folder made an instant before) is found by the next walk.
 */
export const createParcelWatcher: CreateWatcher = async (spec, handlers) => {
  if (spec.backend === 'polling') return createChokidarWatcher(spec, handlers);
  let subscription: AsyncSubscription;
  try {
    subscription = await subscribe(
      spec.root,
      (err, events) => {
        if (err !== null) {
          handlers.onError(withErrno(err));
          return;
        }
        for (const e of events) if (!spec.ignored(e.path)) handlers.onEvent(e.path, e.type);
      },
      { ignore: (spec.ignoredNames ?? []).map((name) => `**/${name}`) },
    );
  } catch (err) {
    throw withErrno(err);
  }
  const result: FolderWatcher = { backend: 'events', close: () => subscription.unsubscribe() };
  return result;
};

/** The native errors carry a message only: ENOSPC (out of inotify watches) gets its code back, as the daemon's fall-back reads it. */
function withErrno(err: unknown): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  if ((e as NodeJS.ErrnoException).code === undefined && /no space left on device|ENOSPC/i.test(e.message))
    (e as NodeJS.ErrnoException).code = 'ENOSPC';
  return e;
}
