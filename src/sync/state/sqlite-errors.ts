import { KbsyncError } from '../../shared/errors.js';

/** True when SQLite says the file is not a database or is malformed. */
export function isCorruption(err: unknown): boolean {
  const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

/** A corruption error as KbsyncError('state_corrupt'); anything else unchanged. */
export function classifyStateError(err: unknown, label: string): unknown {
  if (!isCorruption(err)) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new KbsyncError(
    'state_corrupt',
    `the state database ${label} is damaged (${detail}); move it aside and kbsync rebuilds it from the remote file listing`,
    { cause: err },
  );
}

/** Wraps every method of `api` so that SQLite corruption surfaces as state_corrupt. */
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
