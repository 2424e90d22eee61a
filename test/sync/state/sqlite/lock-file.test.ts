import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KbsyncError } from '../../../../src/shared/errors.js';
import { acquireLock, type LockOwner } from '../../../../src/sync/state/sqlite/lock-file.js';

const now = (): Date => new Date('2025-03-14T12:00:00.000Z');

/** The pid of a process that has already exited: a lock naming it is stale. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid as number;
}

function catchError(fn: () => unknown): KbsyncError {
  try {
    fn();
  } catch (err) {
    if (err instanceof KbsyncError) return err;
    throw err;
  }
  throw new Error('expected a KbsyncError');
}

describe('acquireLock', () => {
  let dir: string;
  let lockPath: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kbsync-lock-'));
    lockPath = join(dir, 'state.db.lock');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the owner to a 0600 lock file and removes it on release', () => {
    const lock = acquireLock(lockPath, '.kbsync/state.db', now);

    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toEqual({
      pid: process.pid,
      host: hostname(),
      startedAt: '2025-03-14T12:00:00.000Z',
    });
    expect(statSync(lockPath).mode & 0o777).toBe(0o600);
    expect(lock.takenOver).toBeNull();
    lock.release();
    expect(existsSync(lockPath)).toBe(false);
  });

  it('refuses a second holder with a message naming the first', () => {
    const first = acquireLock(lockPath, '.kbsync/state.db', now);

    const err = catchError(() => acquireLock(lockPath, '.kbsync/state.db', now));

    expect(err.code).toBe('state_locked');
    expect(err.message).toBe(
      `another kbsync (pid ${process.pid} on ${hostname()}, since 2025-03-14T12:00:00.000Z) holds the writer lock of .kbsync/state.db. ` +
        'Only one runner may sync a state: stop that one, or have every runner share one PostgreSQL state (docs/scale.md). ' +
        'plan, status, explain, audit, query, chat, check and agents work beside it',
    );
    first.release();
  });

  it('names the command that holds the lock, and never suggests another state', () => {
    const first = acquireLock(lockPath, '.kbsync/state.db', now, 'watch');

    const err = catchError(() => acquireLock(lockPath, '.kbsync/state.db', now));

    expect(err.message).toMatch(/^`kbsync watch` \(pid \d+ on /);
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ command: 'watch' });
    expect(err.message).not.toMatch(/another (`state`|state path)/);
    first.release();
  });

  it('takes over the lock of a process that is gone', () => {
    const stale: LockOwner = { pid: deadPid(), host: hostname(), startedAt: '2025-03-01T00:00:00.000Z' };
    writeFileSync(lockPath, JSON.stringify(stale));

    const lock = acquireLock(lockPath, 'state.db', now);

    expect(lock.takenOver).toEqual(stale);
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it("never treats another host's lock as stale", () => {
    writeFileSync(lockPath, JSON.stringify({ pid: deadPid(), host: 'ci-runner-7', startedAt: '2025-03-01T00:00:00.000Z' }));

    const err = catchError(() => acquireLock(lockPath, 'state.db', now));

    expect(err.code).toBe('state_locked');
    expect(err.message).toContain('on ci-runner-7');
  });

  it('takes over a lock file that holds no owner', () => {
    writeFileSync(lockPath, 'garbage');

    const lock = acquireLock(lockPath, 'state.db', now);

    expect(lock.takenOver).toEqual({ pid: 0, host: 'unknown', startedAt: 'unknown' });
    lock.release();
  });

  it('leaves a lock that is no longer its own in place on release', () => {
    const lock = acquireLock(lockPath, 'state.db', now);
    const other = JSON.stringify({ pid: process.pid, host: hostname(), startedAt: '2025-03-15T00:00:00.000Z' });
    writeFileSync(lockPath, other);

    lock.release();

    expect(readFileSync(lockPath, 'utf8')).toBe(other);
  });

  it('leaves no temp files behind', () => {
    const lock = acquireLock(lockPath, 'state.db', now);
    catchError(() => acquireLock(lockPath, 'state.db', now));
    lock.release();

    expect(readdirSync(dir)).toEqual([]);
  });
});
