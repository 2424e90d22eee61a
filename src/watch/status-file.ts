import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import type { DaemonSnapshot } from './snapshot.js';
import { pidAlive } from '../shared/pid-alive.js';

/** What a running `kbsync watch` leaves beside its state for `kbsync status`: its snapshot, host and address. */
export type DaemonStatusFile = DaemonSnapshot & { host: string; http: string | null; updatedAt: string; stoppedAt: string | null };

/** The status file of the state at `statePath`. */
export function daemonStatusPath(statePath: string): string {
  return `${statePath}.watch.json`;
}

/**
 * Writes the status file whole (a temp file renamed over it: a reader never sees half of one), mode 0600.
 * Its folder is made (0700) when missing: with a PostgreSQL state nothing else creates `.kbsync/`.
 */
export function writeDaemonStatus(statePath: string, status: Omit<DaemonStatusFile, 'host' | 'updatedAt'>): void {
  const path = daemonStatusPath(statePath);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ ...status, host: hostname(), updatedAt: new Date().toISOString() }, null, 2)}\n`, {
    mode: 0o600,
  });
  renameSync(temp, path);
}

/**
 * The status file of a `kbsync watch` running on this host for the state at `statePath`, or null: no
 * file, an unreadable one, one left by a daemon that stopped or died.
 */
export function readRunningDaemon(statePath: string): DaemonStatusFile | null {
  let status: DaemonStatusFile;
  try {
    status = JSON.parse(readFileSync(daemonStatusPath(statePath), 'utf8')) as DaemonStatusFile;
  } catch {
    return null;
  }
  if (status.stoppedAt !== null || status.host !== hostname() || !pidAlive(status.pid)) return null;
  return status;
}
