/**
 * The one watcher interface of `kbsync watch`. A watcher only says that something under its folder may
 * have changed: events are hints, the walk of the next sync is the truth, so a watcher may be late,
 * duplicate or coarse (a folder for its files) without harm; one that drops events is covered by the
 * periodic rescan.
 */

/** How a folder is watched: file-system events, or stat polling (network mounts, some Docker and WSL2 mounts). */
export type WatchBackend = 'events' | 'polling';

export type WatcherHandlers = {
  /** Something at `absPath` may have changed (`kind` is the backend's word for it: add, change, unlink...). */
  onEvent(absPath: string, kind: string): void;
  /** The watch failed (ENOSPC: out of inotify watches, EMFILE, a folder that went away...). */
  onError(err: unknown): void;
  /**
   * Out of inotify watches, a backend that polls the folders past the limit one by one (the node
   * backend) says how many it polls and how many it watches, each time that changes.
   */
  onPolled?(folders: { polled: number; watched: number }): void;
};

export type WatcherSpec = {
  /** The folder to watch (absolute). */
  root: string;
  backend: WatchBackend;
  /** Paths not worth an event (the state folder, `.git/`, `node_modules/`). */
  ignored: (absPath: string) => boolean;
  /** Folder names whose trees are not watched at all, where the backend can skip them (`.git`, `node_modules`). */
  ignoredNames?: readonly string[];
  /** How often the polling backend stats each file. */
  pollIntervalMs: number;
};

export type FolderWatcher = {
  readonly backend: WatchBackend;
  /** Whether the folder `absDir` is polled by this watcher, not watched by events (absent: never). */
  polls?(absDir: string): boolean;
  close(): Promise<void>;
};

/** Starts watching; resolves once the backend is ready (its first listing of the folder is done). */
export type CreateWatcher = (spec: WatcherSpec, handlers: WatcherHandlers) => Promise<FolderWatcher>;
