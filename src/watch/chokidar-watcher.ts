import { watch } from 'chokidar';
import type { CreateWatcher, FolderWatcher } from './watcher.js';

/**
 * The chokidar backend: file-system events (inotify, FSEvents...) or, with `backend: polling`, chokidar's
 * stat polling. Chokidar's own atomic-write and write-finish handling is left off: the daemon debounces,
 * and the sync refuses to send a file that moved since it was hashed.
 */
export const createChokidarWatcher: CreateWatcher = async (spec, handlers) => {
  const polling = spec.backend === 'polling';
  const watcher = watch(spec.root, {
    ignoreInitial: true,
    persistent: true,
    followSymlinks: false,
    usePolling: polling,
    interval: spec.pollIntervalMs,
    binaryInterval: spec.pollIntervalMs,
    atomic: false,
    ignored: (path: string) => spec.ignored(path),
  });
  watcher.on('all', (kind: string, path: string) => handlers.onEvent(path, kind));
  await new Promise<void>((resolve, reject) => {
    const onError = (err: unknown): void => reject(err instanceof Error ? err : new Error(String(err)));
    watcher.once('error', onError);
    watcher.once('ready', () => {
      watcher.off('error', onError);
      resolve();
    });
  }).catch(async (err: unknown) => {
    await watcher.close();
    throw err;
  });
  watcher.on('error', (err: unknown) => handlers.onError(err));
  const result: FolderWatcher = { backend: spec.backend, close: () => watcher.close() };
  return result;
};
