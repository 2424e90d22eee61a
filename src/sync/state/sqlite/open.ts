import { chmodSync, closeSync, existsSync, mkdirSync, openSync, renameSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from '../../../shared/logger.js';
import { acquireLock, yieldingHolder, type HeldLock, type LockOwner } from './lock-file.js';
import { KbsyncError } from '../../../shared/errors.js';
import { joinAsGuest, oldestLiveGuestMs } from './guests.js';
import { migrate, MIGRATIONS } from './schema.js';
import { classifyStateError } from './errors.js';
import { createStateStore } from './store.js';
import type { OpenStateOptions } from '../open.js';
import type { StateStore } from '../state-store.js';

// Not silentLogger(): opening the state must not load pino (a plan that logs nothing never needs it).
const NO_LOG: Pick<Logger, 'warn'> = { warn: () => {} };

const PRIVATE_FILE = 0o600;
const GUEST_BUSY_TIMEOUT_MS = 30_000;
const PRIVATE_DIR = 0o700;

/**
 * Opens (creating and migrating as needed) the sync state database at `path`: folder 0700, files 0600,
 * WAL, synchronous=FULL, foreign keys on, one writer at a time. Throws KbsyncError 'state_locked' when
 * another kbsync holds it, 'state_corrupt' when the file is damaged (see moveAsideCorrupt), 'state_version'
 * when a newer kbsync wrote it, 'state_unavailable' when the path cannot hold it (a folder, no permission...).
 */
export function openSqliteState(path: string, options: OpenStateOptions = {}): StateStore {
  if (options.access !== undefined) return openBeside(path, options.access, options);
  const now = options.now ?? ((): Date => new Date());
  const log = options.logger ?? NO_LOG;
  const abs = resolve(path);
  let lock: HeldLock | null = null;
  try {
    ensurePrivateDir(dirname(abs), log);
    if (options.lock !== false) {
      lock = acquireLock(lockPathOf(abs), path, now, options.command, options.yields === true);
      if (lock.takenOver !== null) log.warn({ path, stale: lock.takenOver }, 'took over a stale state lock');
    }
  } catch (err) {
    throw classifyStateError(err, path, { opening: true });
  }
  let db: Database.Database | null = null;
  try {
    closeSync(openSync(abs, 'a', PRIVATE_FILE)); // SQLite gives -wal/-shm the database file's mode
    chmodSync(abs, PRIVATE_FILE);
    db = new Database(abs, { timeout: options.busyTimeoutMs ?? 5000 });
    // Before anything else touches a new file: freed pages (pruned ops) go back to the disk on incremental_vacuum.
    if (db.pragma('page_count', { simple: true }) === 0) db.pragma('auto_vacuum = INCREMENTAL');
    if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal') throw new Error('the state database refused WAL mode');
    db.pragma('journal_size_limit = 4194304');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('temp_store = MEMORY');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    const from = migrate(db);
    for (const suffix of ['-wal', '-shm']) if (existsSync(abs + suffix)) chmodSync(abs + suffix, PRIVATE_FILE);
    const heldLock = lock;
    return createStateStore({
      db,
      label: path,
      now,
      isNew: from === 0,
      lockTakenOver: lock?.takenOver ?? null,
      recover: lock !== null,
      oldestGuestMs: () => oldestLiveGuestMs(abs),
      onClose: () => heldLock?.release(),
    });
  } catch (err) {
    db?.close();
    lock?.release();
    throw classifyStateError(err, path, { opening: true });
  }
}

const lockPathOf = (absStatePath: string): string => `${absStatePath}.lock`;

/** Who holds the writer lock of the SQLite state at `path` for a command that yields it to a runner (see LockOwner), or null. */
export function yieldingLockHolder(path: string): LockOwner | null {
  return yieldingHolder(lockPathOf(resolve(path)));
}

/** A reader's or a guest's open of an existing, migrated SQLite state, beside its lock holder. */
function openBeside(path: string, access: 'reader' | 'guest', options: OpenStateOptions): StateStore {
  const now = options.now ?? ((): Date => new Date());
  const abs = resolve(path);
  // A guest's write may wait for a runner's large transaction (a first sync's bookkeeping of every file).
  const busyMs = options.busyTimeoutMs ?? (access === 'guest' ? GUEST_BUSY_TIMEOUT_MS : 5000);
  let db: Database.Database | null = null;
  let guest: { release(): void } | null = null;
  try {
    if (access === 'guest') guest = joinAsGuest(abs, now().getTime());
    db = new Database(abs, { readonly: access === 'reader', fileMustExist: true, timeout: busyMs });
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') throw new Error('the state database is not in WAL mode');
    db.pragma('foreign_keys = ON');
    db.pragma('temp_store = MEMORY');
    db.pragma(`busy_timeout = ${busyMs}`);
    const version = db.pragma('user_version', { simple: true }) as number;
    const latest = MIGRATIONS.at(-1)?.version ?? 0;
    if (version > latest) migrate(db); // throws state_version, naming both versions
    if (version < latest)
      throw new KbsyncError(
        'state_unavailable',
        `${path} has schema version ${version}: its writer must migrate it first (stop it and run again)`,
      );
    const opened = guest;
    const store = createStateStore({
      db,
      label: path,
      now,
      isNew: false,
      lockTakenOver: null,
      recover: false,
      readOnly: access === 'reader',
      onClose: () => opened?.release(),
    });
    // A reader reads one snapshot, as of now, until it closes: the writer beside it may change the rows
    // between two of its reads (the tracked files' columns, then their details when first needed).
    if (access === 'reader') {
      db.exec('BEGIN');
      db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();
    }
    return store;
  } catch (err) {
    db?.close();
    guest?.release();
    throw classifyStateError(err, path, { opening: true });
  }
}

/** Renames a damaged state database (and its -wal/-shm) to `<path>.corrupt-<UTC timestamp>`; returns the new path. */
export function moveAsideCorrupt(path: string, now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const aside = `${path}.corrupt-${stamp}`;
  renameSync(path, aside);
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
  }
  return aside;
}

/** Creates the state folder 0700; an existing folder is left as it is, with a warning if others can enter it. */
function ensurePrivateDir(dir: string, log: Pick<Logger, 'warn'>): void {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    chmodSync(dir, PRIVATE_DIR);
    return;
  }
  const st = statSync(dir);
  if (!st.isDirectory()) throw Object.assign(new Error(`${dir} is not a folder`), { code: 'ENOTDIR' });
  if ((st.mode & 0o077) !== 0) log.warn({ dir }, 'state folder is accessible to other users');
}
