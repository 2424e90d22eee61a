import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import type { DaemonSnapshot } from './snapshot.js';
import { pidAlive } from '../shared/pid-alive.js';

/**
 * How often a running daemon touches its status file (its mtime only: no write, no snapshot), so that
 * `kbsync status` can tell a daemon that lives from one that is stopped (SIGSTOP, a suspended machine,
 * a debugger) or hung. One wake-up per beat of an idle daemon.
 */
export const HEARTBEAT_MS = 5000;

/** Beats missed before `status` says the daemon does not answer: a busy event loop is late by a beat, not three. */
const SILENT_AFTER_BEATS = 3;

/**
 * What a running `kbsync watch` leaves beside its state for `kbsync status`: its snapshot, host and
 * address, and how often it beats (`heartbeatMs`: absent in an older kbsync's file, whose age tells nothing).
 */
export type DaemonStatusFile = DaemonSnapshot & {
  host: string;
  http: string | null;
  updatedAt: string;
  stoppedAt: string | null;
  heartbeatMs?: number;
};

/**
 * A status file as `kbsync status` reads it: with the file's last beat (its mtime), how long ago that
 * was, and whether the daemon answers (no more than SILENT_AFTER_BEATS beats missed).
 */
export type RunningDaemon = DaemonStatusFile & { heartbeat?: { at: string; silentSeconds: number; answering: boolean } };

/** The status file of the state at `statePath`. */
export function daemonStatusPath(statePath: string): string {
  return `${statePath}.watch.json`;
}

/**
 * Writes the status file whole (a temp file renamed over it: a reader never sees half of one), mode 0600.
 * Its folder is made (0700) when missing: with a PostgreSQL state nothing else creates `.kbsync/`.
 */
export function writeDaemonStatus(statePath: string, status: Omit<DaemonStatusFile, 'host' | 'updatedAt' | 'heartbeatMs'>): void {
  const path = daemonStatusPath(statePath);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  const file: DaemonStatusFile = { ...status, host: hostname(), updatedAt: new Date().toISOString(), heartbeatMs: HEARTBEAT_MS };
  writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, path);
}

/**
 * Touches the status file every `intervalMs` (its mtime: the file is not written again) until stopped.
 * The timer holds no process open; a file not there (not written yet, removed) is left alone.
 */
export function startHeartbeat(statePath: string, intervalMs = HEARTBEAT_MS): { stop(): void } {
  const path = daemonStatusPath(statePath);
  const timer = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // no file to touch: the next snapshot writes one
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * The status file of a `kbsync watch` running on this host for the state at `statePath`, or null: no
 * file, an unreadable one, one left by a daemon that stopped or died. `nowMs` dates its heartbeat.
 */
export function readRunningDaemon(statePath: string, nowMs = Date.now()): RunningDaemon | null {
  let status: DaemonStatusFile;
  let mtimeMs: number;
  try {
    const fd = openSync(daemonStatusPath(statePath), 'r');
    try {
      mtimeMs = fstatSync(fd).mtimeMs;
      status = JSON.parse(readFileSync(fd, 'utf8')) as DaemonStatusFile;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  if (status.stoppedAt !== null || status.host !== hostname() || !pidAlive(status.pid)) return null;
  if (typeof status.heartbeatMs !== 'number') return status;
  const silentMs = Math.max(0, nowMs - mtimeMs);
  const heartbeat = {
    at: new Date(mtimeMs).toISOString(),
    silentSeconds: Math.floor(silentMs / 1000),
    answering: silentMs <= SILENT_AFTER_BEATS * status.heartbeatMs,
  };
  return { ...status, heartbeat };
}
