import { KbsyncError } from '../../shared/errors.js';
import { isPostgresUrl } from '../../shared/state-url.js';
import { openPgState, redactUrl } from './pg/index.js';
import { snapshotCounts, type StateSnapshot } from './snapshot.js';
import { readSqliteSnapshot, writeSqliteSnapshot } from './sqlite/transfer.js';

/** What `kbsync state migrate` did. */
export type MigrateReport = { from: string; to: string; counts: Record<string, number> };

/**
 * Copies a whole state to another place: a SQLite file to PostgreSQL, PostgreSQL to a new SQLite file
 * (or either to its own kind). The destination must be new: an empty PostgreSQL database, a file
 * that does not exist. `scope` (the config's sources) becomes the owner of the open work brought
 * into PostgreSQL. The source is left as it was; the destination is read back and compared.
 */
export function migrateState(from: string, to: string, scope: string): MigrateReport {
  const label = (where: string): string => (isPostgresUrl(where) ? redactUrl(where) : where);
  if (from === to) throw new KbsyncError('state_conflict', `the state is already at ${label(to)}`);
  const snapshot = read(from);
  if (isPostgresUrl(to)) {
    const dest = openPgState(to, { lock: false, scope });
    try {
      dest.importSnapshot(snapshot, label(from));
    } finally {
      dest.close();
    }
  } else {
    writeSqliteSnapshot(to, snapshot);
  }
  const counts = snapshotCounts(snapshot);
  const back = snapshotCounts(read(to));
  for (const [kind, n] of Object.entries(counts)) {
    if (back[kind] !== n)
      throw new KbsyncError('state_write_failed', `${label(to)} holds ${back[kind]} ${kind} rows after the migration, ${n} were copied`);
  }
  return { from: label(from), to: label(to), counts };
}

function read(where: string): StateSnapshot {
  if (!isPostgresUrl(where)) return readSqliteSnapshot(where);
  const store = openPgState(where, { lock: false });
  try {
    return store.exportSnapshot();
  } finally {
    store.close();
  }
}
