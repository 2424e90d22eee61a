import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { KbsyncError } from '../../../shared/errors.js';
import { pidAlive } from '../../../shared/pid-alive.js';

/**
 * What a lock file holds: who has the state open (`command`: the kbsync command, when known).
 * `yields`: a command that syncs nothing (status, plan, query...) took the lock to repair the state
 * before it reads; it ends soon, and a runner that finds it waits for it rather than refuse.
 */
export type LockOwner = { pid: number; host: string; startedAt: string; command?: string; yields?: true };

/** A held lock; `takenOver` names the dead owner whose stale lock was replaced, if any. */
export type HeldLock = { path: string; owner: LockOwner; takenOver: LockOwner | null; release: () => void };

/**
 * Takes the exclusive writer lock `lockPath` (mode 0600, holding the owner as JSON, created exclusively).
 * A lock whose pid is not alive on this host is stale and taken over; any other existing lock
 * throws KbsyncError('state_locked') naming its owner. `label` is the state path shown in messages.
 */
export function acquireLock(lockPath: string, label: string, now: () => Date, command?: string, yields = false): HeldLock {
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    startedAt: now().toISOString(),
    ...(command === undefined ? {} : { command }),
    ...(yields ? { yields: true as const } : {}),
  };
  let takenOver: LockOwner | null = null;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (tryCreate(lockPath, owner)) return held(lockPath, owner, takenOver);
    const current = readOwner(lockPath);
    if (current === 'missing') continue;
    if (current !== 'unreadable' && !isStale(current)) throw lockedError(current, label);
    // Take the stale lock over: move it aside under a unique name, then check that what we moved is
    // still the stale one (another kbsync may have taken it over between our read and the rename).
    const aside = `${lockPath}.stale-${process.pid}-${Date.now()}-${attempt}`;
    try {
      renameSync(lockPath, aside);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) continue;
      throw err;
    }
    const moved = readOwner(aside);
    if (moved !== 'missing' && moved !== 'unreadable' && !isStale(moved)) {
      restore(aside, lockPath);
      throw lockedError(moved, label);
    }
    unlinkQuietly(aside);
    takenOver = current === 'unreadable' ? { pid: 0, host: 'unknown', startedAt: 'unknown' } : current;
  }
  throw new KbsyncError('state_locked', `could not take the lock ${lockPath}: it keeps changing hands`);
}

function held(path: string, owner: LockOwner, takenOver: LockOwner | null): HeldLock {
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    const current = readOwner(path);
    // Only remove the lock if it is still ours.
    if (typeof current === 'object' && current.pid === owner.pid && current.startedAt === owner.startedAt && current.host === owner.host) {
      unlinkQuietly(path);
    }
  };
  process.on('exit', release);
  return { path, owner, takenOver, release };
}

/*
 * The lock appears atomically complete: the owner is written to a private temp file (O_EXCL, 0600)
 * which is then hard-linked to the lock path (link fails with EEXIST like O_EXCL does). A reader
 * therefore never sees a half-written lock and mistakes it for a stale one.
 */
function tryCreate(path: string, owner: LockOwner): boolean {
  const temp = `${path}.${process.pid}-${Math.random().toString(36).slice(2)}`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, JSON.stringify(owner));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, path);
    return true;
  } catch (err) {
    if (isErrno(err, 'EEXIST')) return false;
    throw err;
  } finally {
    unlinkQuietly(temp);
  }
}

function readOwner(path: string): LockOwner | 'missing' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return 'missing';
    throw err;
  }
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.startedAt === 'string') {
      const command = typeof value.command === 'string' ? { command: value.command } : {};
      const yields = value.yields === true ? { yields: true as const } : {};
      return { pid: value.pid, host: value.host, startedAt: value.startedAt, ...command, ...yields };
    }
  } catch {
    // fall through: a half-written or foreign file
  }
  return 'unreadable';
}

/** The live holder of the lock `lockPath` that yields it to a runner (see LockOwner), or null: none, or one that does not. */
export function yieldingHolder(lockPath: string): LockOwner | null {
  const owner = readOwner(lockPath);
  return typeof owner === 'object' && owner.yields === true && !isStale(owner) ? owner : null;
}

/** A lock is stale when its owner ran on this host and that pid is gone. Another host's lock is never stale. */
function isStale(owner: LockOwner): boolean {
  return owner.host === hostname() && !pidAlive(owner.pid);
}

/**
 * Names the holder and the two safe ways on. Never another state path: two states for one dataset
 * each think the other's uploads are new files, and upload them again.
 */
function lockedError(owner: LockOwner, label: string): KbsyncError {
  const what = owner.command === undefined ? 'another kbsync' : `\`kbsync ${owner.command}\``;
  return new KbsyncError(
    'state_locked',
    `${what} (pid ${owner.pid} on ${owner.host}, since ${owner.startedAt}) holds the writer lock of ${label}. ` +
      'Only one runner may sync a state: stop that one, or have every runner share one PostgreSQL state (docs/scale.md). ' +
      'plan, status, explain, audit, query, chat, check and agents work beside it',
  );
}

function restore(aside: string, lockPath: string): void {
  try {
    linkSync(aside, lockPath);
  } catch {
    // someone holds a newer lock: theirs stands
  }
  unlinkQuietly(aside);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
}

function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && (err as NodeJS.ErrnoException).code === code;
}
