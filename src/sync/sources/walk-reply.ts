import type { ErrorCode } from '../../shared/errors.js';
import type { PackedScan } from './scan-codec.js';

/** What the walk worker posts per source: its packed walk, or the error the walk threw (code null: not a KbsyncError). */
export type WalkReply =
  | { kind: 'scan'; packed: PackedScan }
  | { kind: 'error'; source: string; code: ErrorCode | null; message: string };
