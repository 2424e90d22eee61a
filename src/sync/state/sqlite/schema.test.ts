import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../shared/errors.js';
import { MIGRATIONS, migrate, REMOTE_CHECK_KEY, type Migration } from './schema.js';

const tables = (db: Database.Database): string[] =>
  db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[];

describe('migrate', () => {
  let db: Database.Database;
  afterEach(() => db.close());
  /** A new state at the first `steps` migrations with one run, and an insert of that run's outbox rows (kind, credits, key, state). */
  const outboxAt = (steps: number): Database.Statement => {
    db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, steps));
    db.prepare(`INSERT INTO runs (id, command, status, started_at) VALUES (1, 'sync', 'done', 0)`).run();
    return db.prepare(
      `INSERT INTO outbox (run_id, kind, credits, idempotency_key, state, created_at, updated_at) VALUES (1, ?, ?, ?, ?, 0, 0)`,
    );
  };
  const outboxOpenIndex = (): unknown =>
    db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'outbox_open'`).pluck().get();

  it('creates every table from an empty database and sets user_version', () => {
    db = new Database(':memory:');

    const from = migrate(db);

    expect(from).toBe(0);
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version);
    expect(tables(db)).toEqual([
      'budget_totals',
      'files',
      'intel_entries',
      'ledger',
      'meta',
      'outbox',
      'remote_copies',
      'runs',
      'sources',
      'sqlite_sequence',
      'webhook_events',
    ]);
  });

  it('is a no-op on an up-to-date database', () => {
    db = new Database(':memory:');
    migrate(db);

    const from = migrate(db);

    expect(from).toBe(MIGRATIONS.at(-1)?.version);
  });

  it('applies only the steps after the current version, in order', () => {
    db = new Database(':memory:');
    const ran: number[] = [];
    const step = (version: number): Migration => ({ version, name: `v${version}`, up: () => void ran.push(version) });
    migrate(db, [step(1)]);

    migrate(db, [step(1), step(2), step(3)]);

    expect(ran).toEqual([1, 2, 3]);
    expect(db.pragma('user_version', { simple: true })).toBe(3);
  });

  it('rolls a failed step back, leaving the version where it was', () => {
    db = new Database(':memory:');
    const failing: Migration = {
      version: 1,
      name: 'bad',
      up: (d) => {
        d.exec('CREATE TABLE x (a)');
        throw new Error('boom');
      },
    };

    expect(() => migrate(db, [failing])).toThrow('boom');

    expect(tables(db)).toEqual([]);
    expect(db.pragma('user_version', { simple: true })).toBe(0);
  });

  it('refuses a database written by a newer kbsync', () => {
    db = new Database(':memory:');
    db.pragma('user_version = 99');

    let caught: unknown;
    try {
      migrate(db);
    } catch (err) {
      caught = err;
    }

    expect(isKbsyncError(caught, 'state_version')).toBe(true);
  });

  it('rejects a migration list with a gap', () => {
    db = new Database(':memory:');
    const noop = (version: number): Migration => ({ version, name: 'x', up: () => undefined });

    expect(() => migrate(db, [noop(1), noop(3)])).toThrow(RangeError);
  });

  it('v3 widens the outbox to query and chat ops, keeping every row and the id high-water mark', () => {
    const insert = outboxAt(2);
    insert.run('reindex', 2, 'k1', 'done');
    insert.run('reindex', 2, 'k2', 'unknown');
    insert.run('reindex', 2, 'k3', 'done');
    db.prepare(`DELETE FROM outbox WHERE id IN (1, 3)`).run(); // pruned: ids 1 and 3 live on in the ledger
    expect(() => insert.run('query', 1, 'k4', 'pending')).toThrow(/CHECK constraint/);

    migrate(db, MIGRATIONS.slice(0, 9));

    expect(db.prepare('SELECT id, kind, idempotency_key, state FROM outbox').all()).toEqual([
      { id: 2, kind: 'reindex', idempotency_key: 'k2', state: 'unknown' },
    ]);
    const next = Number(insert.run('query', 1, 'k5', 'pending').lastInsertRowid);
    expect(next).toBe(4);
    insert.run('chat', 1, 'k6', 'pending');
    expect(() => insert.run('agent', 1, 'k7', 'pending')).toThrow(/CHECK constraint/);
    expect(outboxOpenIndex()).toBe('outbox_open');
  });

  it('v7 widens the outbox to agent_create and agent_config ops, keeping rows, the earlier kinds and the id high-water mark', () => {
    const insert = outboxAt(6);
    insert.run('chat', 1, 'k1', 'unknown');
    insert.run('query', 1, 'k2', 'done');
    db.prepare(`DELETE FROM outbox WHERE id = 2`).run();
    expect(() => insert.run('agent_create', 5, 'k3', 'pending')).toThrow(/CHECK constraint/);

    migrate(db, MIGRATIONS.slice(0, 9));

    expect(db.prepare('SELECT id, kind, idempotency_key, state FROM outbox').all()).toEqual([
      { id: 1, kind: 'chat', idempotency_key: 'k1', state: 'unknown' },
    ]);
    expect(Number(insert.run('agent_create', 5, 'k4', 'pending').lastInsertRowid)).toBe(3);
    insert.run('agent_config', 2, 'k5', 'pending');
    for (const kind of ['upload', 'reprocess', 'reindex', 'query', 'chat']) insert.run(kind, 1, `k-${kind}`, 'pending');
    expect(() => insert.run('agent_delete', 1, 'k6', 'pending')).toThrow(/CHECK constraint/);
    expect(outboxOpenIndex()).toBe('outbox_open');
  });

  it('v10 drops the outbox kind CHECK, keeping its rows, their ids and its high-water mark', () => {
    const insert = outboxAt(9);
    insert.run('reindex', 2, 'k1', 'pending');
    insert.run('query', 1, 'k2', 'done');
    db.prepare(`DELETE FROM outbox WHERE id = 2`).run();
    expect(() => insert.run('agent_delete', 1, 'k3', 'pending')).toThrow(/CHECK constraint/);

    migrate(db);

    expect(db.prepare('SELECT id, kind, idempotency_key, state FROM outbox').all()).toEqual([
      { id: 1, kind: 'reindex', idempotency_key: 'k1', state: 'pending' },
    ]);
    // A new kind needs no schema step now: the state refuses unknown kinds where it writes (assertOpKind).
    expect(Number(insert.run('agent_delete', 1, 'k4', 'pending').lastInsertRowid)).toBe(3);
    const sql = db.prepare<[], string>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'outbox'`).pluck().get();
    expect(sql).toMatch(/kind\s+TEXT NOT NULL,/);
    expect(sql).toMatch(/CHECK \(state IN/);
    expect(outboxOpenIndex()).toBe('outbox_open');
  });

  it('v4 marks a state that knows no remote copy as not yet checked against the dataset, and only such a state', () => {
    const mark = (d: Database.Database): unknown => d.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(REMOTE_CHECK_KEY);
    db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, 3));
    db.prepare(`INSERT INTO sources (id, name) VALUES (1, 'docs')`).run();
    db.prepare(
      `INSERT INTO files (source_id, path, size, mtime_ns, inode, sha256, remote_id, updated_at) VALUES (1, 'a.md', 4, 0, 0, zeroblob(32), '7', 0)`,
    ).run();
    const insert = (d: Database.Database, path: string, remoteId: string | null): void => {
      d.prepare(`INSERT OR IGNORE INTO sources (id, name) VALUES (1, 'docs')`).run();
      d.prepare(
        `INSERT INTO files (source_id, path, size, mtime_ns, inode, sha256, remote_id, updated_at) VALUES (1, ?, 4, 0, 0, zeroblob(32), ?, 0)`,
      ).run(path, remoteId);
    };
    const empty = new Database(':memory:');
    const localOnly = new Database(':memory:');
    try {
      migrate(empty, MIGRATIONS.slice(0, 3));
      migrate(localOnly, MIGRATIONS.slice(0, 3));
      insert(localOnly, 'dup.md', null); // a duplicate recorded by a sync that never listed: no remote copy known

      migrate(db);
      migrate(empty);
      migrate(localOnly);

      expect(mark(db)).toBeUndefined();
      expect(mark(empty)).toBe('pending');
      expect(mark(localOnly)).toBe('pending');
    } finally {
      empty.close();
      localOnly.close();
    }
  });
  it('v8 widens the outbox to intelligence writes, keeping its rows, their ids and its high-water mark', () => {
    const insert = outboxAt(7);
    insert.run('chat', 1, 'k1', 'done');
    insert.run('query', 1, 'k2', 'unknown');
    insert.run('agent_create', 5, 'k2b', 'pending');
    db.prepare('DELETE FROM outbox WHERE id = 1').run();
    expect(() => insert.run('intelligence', 1, 'k3', 'pending')).toThrow(/CHECK constraint/);

    migrate(db, MIGRATIONS.slice(0, 9));

    expect(db.prepare('SELECT id, kind, idempotency_key, state, payload_json FROM outbox').all()).toEqual([
      { id: 2, kind: 'query', idempotency_key: 'k2', state: 'unknown', payload_json: null },
      { id: 3, kind: 'agent_create', idempotency_key: 'k2b', state: 'pending', payload_json: null },
    ]);
    expect(Number(insert.run('intelligence', 1, 'k4', 'pending').lastInsertRowid)).toBe(4);
    insert.run('intelligence_batch', 3, 'k5', 'pending');
    expect(() => insert.run('agent', 1, 'k6', 'pending')).toThrow(/CHECK constraint/);
    expect(outboxOpenIndex()).toBe('outbox_open');
    expect(db.prepare('SELECT count(*) FROM intel_entries').pluck().get()).toBe(0);
  });
});
