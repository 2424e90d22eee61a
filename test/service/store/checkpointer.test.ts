import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCheckpointer } from '../../../src/service/store/checkpointer.js';
import { openServiceDb, WAL_SIZE_LIMIT_BYTES } from '../../../src/service/store/db.js';
import { until } from '../../helpers/until.js';

let dir: string;
let db: Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kbsync-checkpointer-'));
  db = openServiceDb(join(dir, 'service.db'));
  db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)');
});
afterEach(() => {
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** ~2 MiB in 32 commits of 64 KiB: about 520 WAL pages of 4 KiB. */
function writeSome(): void {
  const insert = db.prepare('INSERT INTO blobs (data) VALUES (?)');
  for (let i = 0; i < 32; i++) insert.run(Buffer.alloc(64 * 1024, i));
}

const dbFileBytes = (): number => statSync(db.name).size;
const autocheckpoint = (): number => db.pragma('wal_autocheckpoint', { simple: true }) as number;

describe('the WAL after a burst of writes', () => {
  it('is cut back to WAL_SIZE_LIMIT_BYTES at the first write after a checkpoint has caught up', () => {
    db.pragma('wal_autocheckpoint = 0'); // as with the checkpointer
    const walBytes = (): number => statSync(`${db.name}-wal`).size;
    const insert = db.prepare('INSERT INTO blobs (data) VALUES (?)');
    const burst = WAL_SIZE_LIMIT_BYTES + 8 * 1024 * 1024;
    db.transaction(() => {
      for (let i = 0; i < burst / (64 * 1024); i++) insert.run(Buffer.alloc(64 * 1024, i));
    })();
    const grown = walBytes();
    // The checkpointer's kind of checkpoint, from a connection of its own.
    const other = new Sqlite(db.name, { fileMustExist: true });
    other.pragma('wal_checkpoint(PASSIVE)');
    other.close();

    insert.run(Buffer.alloc(16));

    expect(grown).toBeGreaterThan(burst);
    expect(walBytes()).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    expect(db.prepare('SELECT count(*) FROM blobs').pluck().get()).toBe(burst / (64 * 1024) + 1);
  });
});

describe('startCheckpointer', () => {
  it('copies the WAL into the database file from its own thread; this connection checkpoints nothing itself', async () => {
    const checkpointer = startCheckpointer(db, { intervalMs: 20 });
    const before = dbFileBytes();

    writeSome();
    await until('the WAL copied into the database file', () => dbFileBytes() >= before + 2 * 1024 * 1024, 5_000);
    await checkpointer.stop();

    expect(autocheckpoint()).toBe(1000);
  });

  it('after a long idle time (its looks spaced out), a write is still copied into the database file', async () => {
    const checkpointer = startCheckpointer(db, { intervalMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = dbFileBytes();

    writeSome();
    await until('the WAL copied into the database file', () => dbFileBytes() >= before + 2 * 1024 * 1024, 5_000);
    await checkpointer.stop();
  });

  it('with its automatic checkpoints off and no checkpointer, the same writes stay in the WAL (what the test above rules out)', async () => {
    db.pragma('wal_autocheckpoint = 0');
    const before = dbFileBytes();

    writeSome();
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(dbFileBytes()).toBe(before);
  });

  it('stop() can be called twice, and the connection then closes as usual', async () => {
    const checkpointer = startCheckpointer(db, { intervalMs: 20 });
    writeSome();

    await Promise.all([checkpointer.stop(), checkpointer.stop()]);
    db.close();

    const reopened = new Sqlite(join(dir, 'service.db'), { readonly: true });
    expect(reopened.prepare('SELECT count(*) FROM blobs').pluck().get()).toBe(32);
    reopened.close();
  });

  it('gives the connection its automatic checkpoints back when the worker cannot open the database', async () => {
    // Unlinked while open: this connection goes on, a new one finds no file.
    rmSync(db.name);
    const checkpointer = startCheckpointer(db, { intervalMs: 20 });

    await until('automatic checkpoints back on', () => autocheckpoint() === 1000, 5_000);
    await checkpointer.stop();
  });
});
