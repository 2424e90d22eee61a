import { join } from 'node:path';

/** True when a configured `state` is a PostgreSQL URL (`postgres://` or `postgresql://`) rather than a file path. */
export function isPostgresUrl(state: string): boolean {
  return /^postgres(ql)?:\/\//i.test(state);
}

/**
 * Why a configured `state` cannot be used, or null: a URL of another scheme (`mysql://...`, a
 * misspelt `postgress://...`) would otherwise be taken as a file name; a PostgreSQL URL must parse.
 */
export function stateLocationProblem(state: string): string | null {
  if (isPostgresUrl(state)) {
    try {
      const url = new URL(state);
      if (url.hostname === '') return 'a PostgreSQL URL needs a host: postgres://USER@HOST:PORT/DATABASE';
      return null;
    } catch {
      return 'not a valid PostgreSQL URL; write postgres://USER:PASSWORD@HOST:PORT/DATABASE (percent-encode special characters)';
    }
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(state);
  if (scheme !== null)
    return `"${scheme[1]}://" is not a state kbsync can keep: use a file path (the SQLite state, e.g. .kbsync/state.db) or postgres://USER@HOST:PORT/DATABASE`;
  return null;
}

/**
 * The local file that stands for the state on this host: the state file itself, or for a PostgreSQL
 * state `<config folder>/.kbsync/postgres.state` (never created as a database: its folder holds git
 * checkouts, and the daemon's status file is named after it).
 */
export function localStatePath(config: { state: string; baseDir: string }): string {
  return isPostgresUrl(config.state) ? join(config.baseDir, '.kbsync', 'postgres.state') : config.state;
}
