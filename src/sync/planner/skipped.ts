import type { PlanAction, PlanItem, SkippedPath, SkipReason, TrackedFile } from '../types.js';
import { remoteNameFor } from '../tracked/keys.js';
import { skippedReason } from './reasons.js';

/** The action each source skip reason maps to (a symlink not followed is an ignore rule at work). */
export const SKIP_ACTION: Record<SkipReason, PlanAction> = {
  ignored: 'skip:ignored',
  secret: 'skip:secret',
  unsupported: 'skip:unsupported',
  symlink: 'skip:ignored',
  unreadable: 'skip:unreadable',
  'bad-name': 'skip:bad-name',
  encrypted: 'skip:encrypted',
  'no-text': 'skip:no-text',
  'convert-failed': 'skip:convert-failed',
};

/** The plan item of a path a source left out; a tracked one keeps pointing at its earlier remote copy. */
export function skippedItem(s: SkippedPath, tracked: TrackedFile | undefined, multiSource: boolean): PlanItem {
  return {
    source: s.source,
    path: s.path,
    action: SKIP_ACTION[s.reason],
    reason: skippedReason(s.reason, s.detail, tracked),
    credits: 0,
    size: s.size,
    sha256: null,
    remoteName: tracked?.remoteName ?? remoteNameFor(s.source, s.path, multiSource),
    remoteId: tracked?.remoteId ?? null,
    wasTracked: tracked !== undefined,
  };
}
