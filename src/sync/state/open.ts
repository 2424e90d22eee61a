import type { Logger } from '../../shared/logger.js';
import { isPostgresUrl, openPgState } from './pg/index.js';
import { openSqliteState } from './sqlite/open.js';
import type { StateStore } from './state-store.js';

export type OpenStateOptions = {
  /** The clock (budget periods, timestamps). @default () => new Date() */
  now?: () => Date;
  /** Where the two warnings of an open go (a stale lock taken over, a state folder others can enter). @default nowhere */
  logger?: Pick<Logger, 'warn'>;
  /**
   * Take the exclusive writer lock `<path>.lock` and recover what a crashed process left behind.
   * `false` is for read-only views and for tests of concurrent writers: it neither locks nor recovers.
   * @default true
   */
  lock?: boolean;
  /**
   * SQLite only. `reader`: opened read-only, without the lock (a command that only reads, beside the
   * runner that holds it). `guest`: without the lock, but writing its own paid calls in short
   * transactions, registered as a guest so that a new lock holder does not recover them (sqlite/guests.ts).
   * Both need the state to exist and be migrated. @default the writer: `lock` decides
   */
  access?: 'reader' | 'guest';
  /** The kbsync command, named in the lock file (and so in another command's state_locked message). */
  command?: string;
  /**
   * SQLite only: the lock is taken by a command that syncs nothing, to repair the state before it
   * reads (lock-file.ts `yields`): a runner that finds it waits for it. @default false
   */
  yields?: boolean;
  /** How long a write waits for another connection's transaction. @default 5000 */
  busyTimeoutMs?: number;
  /**
   * PostgreSQL state only: the sources this process syncs (its runner's scope, see pg/schema.ts): it
   * sees, reserves and reconciles only the outbox ops queued under the same scope. @default ""
   */
  scope?: string;
};

/**
 * Opens the sync state at `path`: a SQLite file (sqlite/open.ts), or, for a `postgres://` or
 * `postgresql://` URL, the shared PostgreSQL state (pg/store.ts): the same StateStore, many runners.
 */
export function openState(path: string, options: OpenStateOptions = {}): StateStore {
  return isPostgresUrl(path) ? openPgState(path, options) : openSqliteState(path, options);
}
