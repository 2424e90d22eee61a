/**
 * Worker-thread entry (see load.ts): reads each source's tracked files as
 * one BULK_SQL row through a read-only connection to the database it is given.
 */
import Database from 'better-sqlite3';
import { serve } from '../../../shared/worker-channel.js';
import { BULK_SQL, SOURCES_SQL, type BulkRow } from './tracked.js';
import type { TrackedApi } from './load.js';

serve<TrackedApi>({
  read(dbPath) {
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      const bulk = db.prepare(BULK_SQL).raw(true);
      const ids = (db.prepare(SOURCES_SQL).raw(true).all() as [number, string][]).map(([id]) => id);
      return ids.map((id): [number, BulkRow] => [id, bulk.get(id) as BulkRow]);
    } finally {
      db.close();
    }
  },
});
