import { lstatSync } from 'node:fs';
import { trackedKey } from '../sync/tracked/keys.js';
import type { ObservedFile } from '../sync/types.js';
import { openWriters, type Writer, type WrittenFile } from './open-writers.js';

/** Where no process's descriptors can be seen, a file seen growing waits until unchanged this long (a copy's pause). */
export const GROWING_QUIET_MS = 10_000;
/** A file held open for writing but not written for this long goes anyway (a log kept open by its process). */
export const WRITER_QUIET_MS = 60_000;
/**
 * How soon the files held back for an open writer are looked at again between cycles, doubling up to
 * WRITER_POLL_MAX_MS while the writer stays: a writer's last write is an event that starts a cycle
 * anyway, so this is for one that closes the file without writing after a pause.
 */
export const WRITER_POLL_MS = 2_000;
export const WRITER_POLL_MAX_MS = 16_000;
/** Past this many paths, the sizes seen longest ago are forgotten. */
const MAX_LOOKS = 10_000;

/**
 * Files a cycle must not upload yet because they are still being written: a copy that pauses mid-file
 * (cp or dd over a slow network) would otherwise have its first half bought, then the whole.
 */
export type StillWriting = {
  /** An event's lstat of a path (burst.ts): its sizes over time tell a file that grows. */
  seen(absPath: string, st: { size: number; ino: number }): void;
  /**
   * Of a cycle's changed files, those not to upload yet, by trackedKey, with why (DeltaPass.holdBack).
   * Only files written in the last minute are looked at. A file a process holds open for writing
   * (Linux, a process this one may look at: see openWriters) waits until it is closed, or unwritten
   * for WRITER_QUIET_MS. Where that cannot be told, a file seen growing waits until it has been
   * unchanged for GROWING_QUIET_MS. Anything else (an editor's save, a copy that ended) goes now.
   */
  holdBack(files: readonly ObservedFile[]): Map<string, string>;
  /** Stops the timer that looks at held files again. */
  close(): void;
};

type Held = { file: WrittenFile; mtimeMs: number; kind: 'writer' | 'growing' };
/** A path's last size seen; `first`: the first look at this inode there (a file just made); `grew`: seen growing since. */
type Look = { ino: number; size: number; first: boolean; grew: boolean };

export function createStillWriting(o: {
  nowMs: () => number;
  /** A file held back may go now: the daemon asks for a cycle, whose plan looks at it again. */
  wake: () => void;
  /** Test hook: the processes' open files (default openWriters). */
  writers?: (files: readonly WrittenFile[]) => Map<string, Writer> | null;
  /** Test hook: a file's owner (default its lstat's uid), null when it is gone. */
  ownerOf?: (absPath: string) => number | null;
  /** This process's user (default process.getuid(); null where there is none). */
  uid?: number | null;
}): StillWriting {
  const writers = o.writers ?? ((files) => openWriters(files));
  const ownerOf = o.ownerOf ?? ((p) => lstatSync(p, { throwIfNoEntry: false })?.uid ?? null);
  const uid = o.uid !== undefined ? o.uid : (process.getuid?.() ?? null);
  const looks = new Map<string, Look>();
  const held = new Map<string, Held>();
  let timer: NodeJS.Timeout | null = null;
  let pollMs = WRITER_POLL_MS;
  let closed = false;

  const see = (absPath: string, size: number, ino: number): Look => {
    const prev = looks.get(absPath);
    let look: Look;
    if (prev === undefined || prev.ino !== ino) look = { ino, size, first: true, grew: false };
    else if (size > prev.size) look = { ino, size, first: false, grew: prev.size > 0 || prev.first || prev.grew };
    else look = { ino, size, first: prev.first && size === prev.size, grew: size === prev.size && prev.grew };
    looks.delete(absPath);
    looks.set(absPath, look);
    if (looks.size > MAX_LOOKS) looks.delete(looks.keys().next().value as string);
    return look;
  };

  /** Whether this process can see every descriptor of the file's owner (its own files; all, as root). */
  const visible = (absPath: string): boolean => uid !== null && (uid === 0 || ownerOf(absPath) === uid);

  const arm = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (closed || held.size === 0) return;
    const now = o.nowMs();
    let at = Number.POSITIVE_INFINITY;
    for (const h of held.values())
      at = Math.min(at, h.kind === 'growing' ? h.mtimeMs + GROWING_QUIET_MS : Math.min(now + pollMs, h.mtimeMs + WRITER_QUIET_MS));
    timer = setTimeout(lookAgain, Math.max(0, at - now));
    timer.unref();
  };

  /** Between cycles: wakes the daemon once some held file may go (its writer closed it, or it has been quiet long enough). */
  const lookAgain = (): void => {
    timer = null;
    const now = o.nowMs();
    const open = [...held.values()].filter((h) => h.kind === 'writer' && now < h.mtimeMs + WRITER_QUIET_MS);
    const still = open.length === 0 ? new Map<string, Writer>() : writers(open.map((h) => h.file));
    const mayGo = [...held.values()].some((h) =>
      h.kind === 'growing' ? now >= h.mtimeMs + GROWING_QUIET_MS : now >= h.mtimeMs + WRITER_QUIET_MS || still?.has(h.file.key) !== true,
    );
    if (mayGo) {
      held.clear();
      o.wake();
      return;
    }
    pollMs = Math.min(pollMs * 2, WRITER_POLL_MAX_MS);
    arm();
  };

  return {
    seen: (absPath, st) => void see(absPath, st.size, st.ino),
    holdBack(files) {
      const out = new Map<string, string>();
      const now = o.nowMs();
      const recent: { f: ObservedFile; key: string; mtimeMs: number; look: Look; wasHeld: boolean }[] = [];
      for (const f of files) {
        const key = trackedKey(f.source, f.path);
        const wasHeld = held.delete(key);
        if (f.sha256 === null) continue;
        const mtimeMs = Number(f.mtimeNs) / 1e6;
        if (now - mtimeMs >= WRITER_QUIET_MS) continue;
        recent.push({ f, key, mtimeMs, look: see(f.absPath, f.size, f.inode), wasHeld });
      }
      const asWritten = (r: (typeof recent)[number]): WrittenFile => ({ key: r.key, absPath: r.f.absPath, inode: r.f.inode });
      const open = recent.length === 0 ? null : writers(recent.map(asWritten));
      for (const r of recent) {
        const file = asWritten(r);
        const writer = open?.get(r.key);
        if (writer !== undefined) {
          if (!r.wasHeld) pollMs = WRITER_POLL_MS;
          held.set(r.key, { file, mtimeMs: r.mtimeMs, kind: 'writer' });
          out.set(
            r.key,
            `still being written: ${writer.command} (pid ${writer.pid}) holds it open for writing; sent once it is closed (or not written for ${WRITER_QUIET_MS / 1000} s)`,
          );
        } else if (r.look.grew && now - r.mtimeMs < GROWING_QUIET_MS && (open === null || !visible(r.f.absPath))) {
          // No writer seen, and none could be: the file's sizes decide.
          held.set(r.key, { file, mtimeMs: r.mtimeMs, kind: 'growing' });
          out.set(
            r.key,
            `still being written: seen growing, last written ${Math.max(0, Math.round((now - r.mtimeMs) / 1000))} s ago; sent once it has been unchanged for ${GROWING_QUIET_MS / 1000} s`,
          );
        }
      }
      arm();
      return out;
    },
    close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
