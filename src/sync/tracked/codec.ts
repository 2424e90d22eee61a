import type { RemoteStatus } from '../types.js';

/** mtime stored for a file rebuilt from the remote listing: never equal to a real stat, so the next observe re-hashes. */
export const UNKNOWN_MTIME_NS = '-1';
/** inode stored for a file rebuilt from the remote listing (see UNKNOWN_MTIME_NS). */
export const UNKNOWN_INODE = -1;
/** size stored when the remote listing gave none. */
export const UNKNOWN_SIZE = -1;

const SHA256_HEX = /^[0-9a-f]{64}$/;
const REMOTE_STATUSES: ReadonlySet<string> = new Set<RemoteStatus>(['queued', 'processing', 'processed', 'failed', 'unknown']);

/** True when `hex` is a SHA-256 as 64 lowercase hex digits: the form kbsync records. */
export const isSha256Hex = (hex: string): boolean => hex.length === 64 && SHA256_HEX.test(hex);

/** The 32-byte BLOB form of a lowercase (or uppercase) hex SHA-256. */
export function shaToBlob(hex: string): Buffer {
  const lower = hex.toLowerCase();
  if (!isSha256Hex(lower)) throw new RangeError(`not a hex SHA-256: ${JSON.stringify(hex)}`);
  return Buffer.from(lower, 'hex');
}

/** The lowercase hex form of a stored SHA-256 BLOB. */
export function blobToSha(blob: Buffer): string {
  return blob.toString('hex');
}

/**
 * Remote names are stored compactly: NULL when the name is the path itself, "/" when it is
 * "<source>/<path>" (a real remote name never starts with "/"), else the name.
 */
export function encodeRemoteName(source: string, path: string, remoteName: string): string | null {
  if (remoteName === path) return null;
  if (remoteName.length === source.length + 1 + path.length && remoteName === `${source}/${path}`) return '/';
  return remoteName;
}

/** The remote name a stored value stands for (see encodeRemoteName). */
export function decodeRemoteName(source: string, path: string, stored: string | null): string {
  if (stored === null) return path;
  if (stored === '/') return `${source}/${path}`;
  return stored;
}

/** A service status string as a RemoteStatus; anything unknown becomes "unknown". */
export function toRemoteStatus(status: string): RemoteStatus {
  return REMOTE_STATUSES.has(status) ? (status as RemoteStatus) : 'unknown';
}

/** Epoch milliseconds as an ISO-8601 UTC string. */
export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/** The decimal-string nanosecond mtime as a bigint for binding (rejects anything but an integer). */
export function mtimeToBind(mtimeNs: string): bigint {
  if (!/^-?\d+$/.test(mtimeNs)) throw new RangeError(`mtimeNs must be a decimal integer string, got ${JSON.stringify(mtimeNs)}`);
  return BigInt(mtimeNs);
}
