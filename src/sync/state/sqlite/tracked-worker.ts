/**
 * Worker-thread entry (see load.ts): reads each source's tracked files as
 * BULK_SQL rows (chunks) through a read-only connection to the database it is given.
 */
import Database from 'better-sqlite3';
import { serve } from '../../../shared/worker-channel.js';
import { readBulk } from './tracked-bulk.js';
import type { TrackedApi } from './load.js';

serve<TrackedApi>({
  read(dbPath) {
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      return readBulk(db);
    } finally {
      db.close();
    }
  },
});
