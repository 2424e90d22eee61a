import type { Stats } from 'node:fs';

/** A file to hash, with the stat fingerprint the scan saw. */
export type HashInput = { absPath: string; size: number; mtimeNs: string; inode: number };

/**
 * A hash, or why there is none: `deferred` when the file changed since the scan or while it was
 * read (or vanished): the next pass hashes it again; `unreadable` when it cannot be opened or read.
 */
export type HashOutcome = { sha256: string } | { deferred: string } | { unreadable: string };

/** What hashFileSync needs from Node, passed in because it also runs as a worker's source text. */
export type HashDeps = {
  openSync(path: string, flags: string): number;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: null): number;
  fstatSync(fd: number): Stats;
  statSync(path: string, options: { throwIfNoEntry: false }): Stats | undefined;
  closeSync(fd: number): void;
  createHash(algorithm: 'sha256'): { update(data: Uint8Array): unknown; digest(encoding: 'hex'): string };
  /** fingerprint.ts's mtimeNsOfMs: the hasher's checks compare times exactly as the walk recorded them. */
  mtimeNsOfMs(mtimeMs: number): string;
};

/**
 * SHA-256 of one file, read `buf.length` bytes at a time into the reused `buf`, checked against
 * the scan's fingerprint before reading (fstat) and after (stat of the path): any difference, a
 * byte count other than the size, or a vanished path gives `deferred`, never a wrong hash.
 *
 * Invariant: this function is also a worker's source (`hashFileSync.toString()`, see
 * hash-worker.ts), so it must only use its parameters and globals: no imports, no helpers, no
 * nested named functions.
 */
export function hashFileSync(deps: HashDeps, file: HashInput, buf: Uint8Array, beforeRestat?: (absPath: string) => void): HashOutcome {
  let fd: number;
  try {
    fd = deps.openSync(file.absPath, 'r');
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'ENOENT') return { deferred: 'vanished since the scan' };
    return { unreadable: String(e.message ?? err) };
  }
  try {
    // Times compare as the walk recorded them (deps.mtimeNsOfMs: this function may import nothing).
    const before = deps.fstatSync(fd);
    if (before.size !== file.size || deps.mtimeNsOfMs(before.mtimeMs) !== file.mtimeNs || before.ino !== file.inode) {
      return { deferred: 'changed since the scan' };
    }
    const hash = deps.createHash('sha256');
    let total = 0;
    for (;;) {
      const n = deps.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      hash.update(n === buf.length ? buf : buf.subarray(0, n));
      total += n;
    }
    if (beforeRestat !== undefined) beforeRestat(file.absPath);
    const after = deps.statSync(file.absPath, { throwIfNoEntry: false });
    if (after === undefined) return { deferred: 'vanished while it was hashed' };
    if (total !== file.size || after.size !== file.size || deps.mtimeNsOfMs(after.mtimeMs) !== file.mtimeNs || after.ino !== file.inode) {
      return { deferred: 'changed while it was hashed' };
    }
    return { sha256: hash.digest('hex') };
  } catch (err) {
    return { unreadable: String((err as { message?: string }).message ?? err) };
  } finally {
    deps.closeSync(fd);
  }
}
