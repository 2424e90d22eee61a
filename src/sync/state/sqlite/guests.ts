import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from '../../../shared/pid-alive.js';

/**
 * Guests of a SQLite state: processes that record paid calls (`query`, `check`...) in short
 * transactions beside the runner that holds the writer lock (`kbsync watch`). Each leaves a file in
 * `<state>.guests/` while it runs. The next lock holder's recovery leaves alone the runs (and their
 * in-flight calls) started since the oldest live guest came: they may be a guest's, still under way.
 */

type GuestFile = { pid: number; host: string; startedAtMs: number };

export function guestsDir(absStatePath: string): string {
  return `${absStatePath}.guests`;
}

/** Registers this process as a guest of the state (before any run of its own starts); release() ends it. */
export function joinAsGuest(absStatePath: string, nowMs: number): { release(): void } {
  const dir = guestsDir(absStatePath);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  const temp = `${path}.tmp`;
  const me: GuestFile = { pid: process.pid, host: hostname(), startedAtMs: nowMs };
  writeFileSync(temp, JSON.stringify(me), { mode: 0o600 });
  renameSync(temp, path);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    unlinkQuietly(path);
  };
  process.on('exit', release);
  return { release };
}

/**
 * When the oldest live guest of the state joined (ms), or null when none is live. The files of
 * guests that died on this host are removed; a guest on another host is taken as live.
 */
export function oldestLiveGuestMs(absStatePath: string): number | null {
  const dir = guestsDir(absStatePath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  let oldest: number | null = null;
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    let guest: GuestFile;
    try {
      guest = JSON.parse(readFileSync(join(dir, name), 'utf8')) as GuestFile;
    } catch {
      continue; // being written, or gone: its own process owns it
    }
    if (guest.host === hostname() && !pidAlive(guest.pid)) {
      unlinkQuietly(join(dir, name));
      continue;
    }
    if (oldest === null || guest.startedAtMs < oldest) oldest = guest.startedAtMs;
  }
  return oldest;
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}
