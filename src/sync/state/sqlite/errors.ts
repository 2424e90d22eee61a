import { errorText, KbsyncError } from '../../../shared/errors.js';

/** True when SQLite says the file is not a database or is malformed. */
export function isCorruption(err: unknown): boolean {
  const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

/**
 * What the file system (or SQLite, opening the file) says when the state path cannot hold a
 * database: a folder where the file should be, a file where a folder should be, no permission, a
 * read-only or full disk. The user's `state` setting, not a bug.
 */
const PATH_PROBLEMS: ReadonlyMap<string, string> = new Map([
  ['EISDIR', 'it is a folder, not a file'],
  ['ENOTDIR', 'a part of it is a file, not a folder'],
  ['EACCES', 'permission denied'],
  ['EPERM', 'operation not permitted'],
  ['EROFS', 'the disk is read-only'],
  ['ENOSPC', 'the disk is full'],
  ['ENAMETOOLONG', 'the path is too long'],
  ['SQLITE_CANTOPEN', 'SQLite cannot open it'],
  ['SQLITE_READONLY', 'SQLite may not write it'],
  ['SQLITE_FULL', 'the disk is full'],
]);

/** Of those, what a state that opened fine can still meet during a run: the disk, not the setting. */
const WRITE_PROBLEMS: ReadonlySet<string> = new Set(['ENOSPC', 'EROFS', 'SQLITE_FULL', 'SQLITE_READONLY']);

/**
 * A corruption error as KbsyncError('state_corrupt'); a path that cannot hold the state, found while
 * opening it, as 'state_unavailable'; a full or read-only disk met later as 'state_write_failed';
 * anything else unchanged.
 */
export function classifyStateError(err: unknown, label: string, o: { opening?: boolean } = {}): unknown {
  const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  // better-sqlite3 gives extended codes (SQLITE_CANTOPEN_ISDIR, SQLITE_READONLY_DBMOVED...): the primary one decides.
  const primary = typeof code === 'string' ? code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1') : undefined;
  const problem = primary === undefined ? undefined : PATH_PROBLEMS.get(primary);
  const detail = errorText(err);
  // Only while opening: then nothing was done yet. A disk that fills up mid-run is not a setting to change.
  if (problem !== undefined && o.opening === true) {
    return new KbsyncError('state_unavailable', `state: cannot use ${label} as the state database: ${problem} (${detail})`, { cause: err });
  }
  if (problem !== undefined && WRITE_PROBLEMS.has(primary as string)) {
    return new KbsyncError('state_write_failed', `the state database ${label} could not be written: ${problem} (${detail})`, {
      cause: err,
    });
  }
  if (!isCorruption(err)) return err;
  return new KbsyncError(
    'state_corrupt',
    `the state database ${label} is damaged (${detail}); move it aside and kbsync rebuilds it from the remote file listing`,
    { cause: err },
  );
}

/** Wraps every method of `api` so that SQLite corruption surfaces as state_corrupt, a full disk as state_write_failed. */
export function guardCorruption<T extends object>(api: T, label: string): T {
  const guarded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(api)) {
    guarded[key] =
      typeof value === 'function'
        ? (...args: unknown[]): unknown => {
            try {
              return (value as (...a: unknown[]) => unknown)(...args);
            } catch (err) {
              throw classifyStateError(err, label);
            }
          }
        : value;
  }
  return guarded as T;
}
