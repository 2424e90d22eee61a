/** The sync state database: tracked files, outbox, credit ledger, runs, meta (the only sync module using SQLite). */
export { openState, type OpenStateOptions } from './open.js';
export { moveAsideCorrupt, yieldingLockHolder } from './sqlite/open.js';
export type { StateDiagnostics, StateStore } from './state-store.js';
export { trackedKey, type TrackedFileInput } from './sqlite/tracked.js';
export { TrackedIndex } from '../tracked/tracked-index.js';
export { toRemoteStatus, UNKNOWN_INODE, UNKNOWN_MTIME_NS, UNKNOWN_SIZE } from '../tracked/codec.js';
export type { LockOwner } from './sqlite/lock-file.js';
export type { NameMapper } from './rebuild.js';
export type * from './state-types.js';
export { toEntryStatus } from './rows.js';
