import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isKbsyncError, type KbsyncError } from '../../../src/shared/errors.js';
import { createLogger } from '../../../src/shared/logger.js';
import { moveAsideCorrupt, openState } from '../../../src/sync/state/index.js';
import { MIGRATIONS } from '../../../src/sync/state/sqlite/schema.js';
import { exited, firstMessage, forkTs } from './fixtures/fork-ts.js';
import { realisticTracked, seededRandom } from './fixtures/realistic.js';
import { fakeClock, tempState } from './fixtures/state-dir.js';

const mode = (path: string): number => statSync(path).mode & 0o777;

function thrown(fn: () => unknown): KbsyncError {
  try {
    fn();
  } catch (err) {
    if (isKbsyncError(err)) return err;
    throw err;
  }
  throw new Error('expected a KbsyncError');
}

function captureLogger(): { logger: ReturnType<typeof createLogger>; lines: () => { msg: string }[] } {
  const chunks: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) });
  return {
    logger: createLogger({ level: 'warn' }, sink),
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

describe('openState', () => {
  let t: ReturnType<typeof tempState>;
  beforeEach(() => (t = tempState()));
  afterEach(() => t.cleanup());

  it('creates a private folder and private files, in WAL with synchronous=FULL and foreign keys', () => {
    const store = t.open();
    store.startRun('sync');

    expect(mode(dirname(t.path))).toBe(0o700);
    for (const file of [t.path, `${t.path}-wal`, `${t.path}-shm`, `${t.path}.lock`]) expect(mode(file)).toBe(0o600);
    expect(store.diagnostics()).toMatchObject({
      journalMode: 'wal',
      synchronous: 2,
      foreignKeys: true,
      autoVacuum: 2,
      schemaVersion: MIGRATIONS.length,
      busyTimeoutMs: 5000,
    });
    expect(store.isNew).toBe(true);
  });

  it('tightens a state file that exists with looser permissions', () => {
    t.open().close();
    chmodSync(t.path, 0o644);

    const store = t.open();

    expect(mode(t.path)).toBe(0o600);
    expect(store.isNew).toBe(false);
  });

  it('warns when an existing state folder is open to others, and leaves it as it is', () => {
    mkdirSync(dirname(t.path), { mode: 0o755 });
    chmodSync(dirname(t.path), 0o755);
    const log = captureLogger();

    t.open({ logger: log.logger });

    expect(mode(dirname(t.path))).toBe(0o755);
    expect(log.lines().map((l) => l.msg)).toEqual(['state folder is accessible to other users']);
  });

  it('refuses a second opener while the first holds the lock, then admits it after close', () => {
    const first = t.open({ now: fakeClock('2025-03-14T12:00:00.000Z').now });

    const err = thrown(() => openState(t.path));

    expect(err.code).toBe('state_locked');
    expect(err.message).toBe(
      `another kbsync (pid ${process.pid} on ${hostname()}, since 2025-03-14T12:00:00.000Z) holds the writer lock of ${t.path}. ` +
        'Only one runner may sync a state: stop that one, or have every runner share one PostgreSQL state (docs/scale.md). ' +
        'plan, status, explain, audit, query, chat, check and agents work beside it',
    );
    first.close();
    expect(existsSync(`${t.path}.lock`)).toBe(false);
    expect(t.open().isNew).toBe(false);
  });

  it('releases the lock when the process exits without close()', async () => {
    const child = forkTs('./open-and-exit.ts', [t.path, 'exit']);

    await firstMessage(child);
    await exited(child);

    expect(existsSync(`${t.path}.lock`)).toBe(false);
  });

  it('takes over the lock of a killed kbsync, with a warning', async () => {
    const child = forkTs('./open-and-exit.ts', [t.path, 'hang']);
    await firstMessage(child);
    const dead = JSON.parse(readFileSync(`${t.path}.lock`, 'utf8')) as { pid: number };
    expect(() => openState(t.path)).toThrow(/another kbsync/);
    child.kill('SIGKILL');
    await exited(child);
    const log = captureLogger();

    const store = t.open({ logger: log.logger });

    expect(store.lockTakenOver).toMatchObject({ pid: dead.pid, host: hostname() });
    expect(log.lines().map((l) => l.msg)).toEqual(['took over a stale state lock']);
  });

  it('opens without the lock when asked (read-only views, concurrent-writer tests)', () => {
    const holder = t.open();

    const second = t.open({ lock: false });

    expect(second.trackedCount()).toBe(0);
    expect(holder.trackedCount()).toBe(0);
  });

  it('reports a file that is not a database as state_corrupt and releases the lock', () => {
    mkdirSync(dirname(t.path), { recursive: true });
    writeFileSync(t.path, 'this is not an SQLite database. '.repeat(200));

    const err = thrown(() => openState(t.path));

    expect(err.code).toBe('state_corrupt');
    expect(err.message).toContain(t.path);
    expect(existsSync(`${t.path}.lock`)).toBe(false);
  });

  it('moves a damaged database aside so that a new one can be built', () => {
    mkdirSync(dirname(t.path), { recursive: true });
    writeFileSync(t.path, 'garbage '.repeat(1000));
    writeFileSync(`${t.path}-wal`, 'old wal');

    const aside = moveAsideCorrupt(t.path, new Date('2025-03-14T12:34:56.789Z'));
    const store = t.open();

    expect(aside).toBe(`${t.path}.corrupt-20250314T123456Z`);
    expect(
      readdirSync(dirname(t.path))
        .filter((f) => f.includes('corrupt'))
        .sort(),
    ).toEqual(['state.db.corrupt-20250314T123456Z', 'state.db.corrupt-20250314T123456Z-wal']);
    expect(store.isNew).toBe(true);
  });

  it('reports a malformed database (damaged pages) as state_corrupt when it is read', () => {
    const store = t.open();
    const rnd = seededRandom(3);
    store.upsertTrackedMany(Array.from({ length: 3000 }, (_, i) => realisticTracked(i, rnd)));
    store.close();
    const bytes = readFileSync(t.path);
    const pageSize = bytes.readUInt16BE(16);
    bytes.fill(0xa5, pageSize * 4, bytes.length - pageSize);
    writeFileSync(t.path, bytes);

    const err = thrown(() => t.open().loadTrackedFiles());

    expect(err.code).toBe('state_corrupt');
  });

  it('refuses a database written by a newer kbsync', () => {
    t.open().close();
    // Bump the schema version the way a future migration would.
    const bytes = readFileSync(t.path);
    bytes.writeUInt32BE(99, 60);
    writeFileSync(t.path, bytes);

    const err = thrown(() => openState(t.path));

    expect(err.code).toBe('state_version');
    expect(existsSync(`${t.path}.lock`)).toBe(false);
  });
});
