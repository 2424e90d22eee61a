import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite, { type Database } from 'better-sqlite3';
import { migrateWebhooks } from '../../src/service/store/webhooks.js';

export type WebhookTestDb = { path: string; open(): Database; cleanup(): void };

/** A temp SQLite file with the webhook tables (WAL, foreign keys on, as the service opens it). */
export function webhookTestDb(): WebhookTestDb {
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-webhooks-'));
  const path = join(dir, 'service.db');
  const opened: Database[] = [];
  return {
    path,
    open() {
      const db = new Sqlite(path);
      db.pragma('journal_mode = WAL');
      db.pragma('foreign_keys = ON');
      migrateWebhooks(db);
      opened.push(db);
      return db;
    },
    cleanup() {
      for (const db of opened) if (db.open) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
