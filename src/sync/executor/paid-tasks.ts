import { stat } from 'node:fs/promises';
import type { KnowledgeClient } from '../../client/index.js';
import { KbsyncError } from '../../shared/errors.js';
import { costOf } from '../../shared/plans.js';
import { mtimeNsOf } from '../sources/fingerprint.js';
import { join } from 'node:path';
import { convertFile } from '../../convert/convert-file.js';
import { convertTypeOf, type ConvertType } from '../../shared/file-types.js';
import { ConversionCache, markdownPath, readMarkdown } from '../sources/converted.js';
import type { OutboxOp } from '../state/index.js';
import { toRemoteStatus } from '../state/index.js';
import type { ObservedFile, PlanItem } from '../types.js';
import type { ObservedLookup } from './observed-lookup.js';
import type { PaidTask } from './paid-ops.js';

/** The paid calls a sync makes (upload, reprocess), as tasks for runPaidTasks: what the outbox records and the call itself. */

/**
 * The paid call for one planned item. A converted document (`convertedDir`: where its Markdown is
 * kept) uploads its Markdown, checked against the hash the outbox records before it is sent.
 */
export function taskFor(item: PlanItem, observed: ObservedLookup, client: KnowledgeClient, convertedDir: string): PaidTask {
  if (item.action === 'reprocess') return reprocessTask(item.source, item.path, item.remoteId as string, item.reason, client);
  const file = observed(item.source, item.path) as ObservedFile;
  const type = convertTypeOf(item.path);
  return {
    op: {
      kind: 'upload',
      source: item.source,
      path: item.path,
      sha256: file.sha256 as string,
      size: file.size,
      mtimeNs: file.mtimeNs,
      inode: file.inode,
      remoteName: item.remoteName,
      credits: item.credits,
      reason: item.reason,
    },
    perform: async (op: OutboxOp) => {
      await assertAsHashed(file);
      const body = type === null ? { path: file.absPath, size: file.size } : await markdownOf(file, type, convertedDir);
      const r = await client.uploadFile({ ...body, name: item.remoteName }, { idempotencyKey: op.idempotencyKey });
      return {
        outcome: 'done',
        creditsCharged: r.creditsCharged,
        remoteId: r.id,
        remoteStatus: toRemoteStatus(r.status),
        remoteSha256: r.sha256,
      };
    },
  };
}

/**
 * Refuses (file_changed) to upload a file whose size, mtime or inode moved since it was hashed: its
 * content is no longer what was hashed and priced. The client then sends exactly the hashed size, and
 * the server's sha256 of what it got is compared when the outcome is recorded (an edit in place during
 * the upload itself).
 */
async function assertAsHashed(file: ObservedFile): Promise<void> {
  let now;
  try {
    now = await stat(file.absPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new KbsyncError('file_changed', `${file.absPath}: gone since it was hashed (${code}): not sent; the next run looks again`, {
      cause: err,
    });
  }
  if (now.size !== file.size || mtimeNsOf(now) !== file.mtimeNs || now.ino !== file.inode) {
    throw new KbsyncError(
      'file_changed',
      `${file.absPath} changed since it was hashed (size, mtime or inode moved): not sent; the next run hashes it again`,
    );
  }
}

/**
 * The kept Markdown of a converted document, checked against the hash that was planned and priced.
 * Gone from the cache (a cleaned state folder), it is converted again here; Markdown that does not
 * match is not sent.
 */
async function markdownOf(file: ObservedFile, type: ConvertType, dir: string): Promise<{ path: string; size: number }> {
  const sha256 = file.sha256 as string;
  let bytes = readMarkdown(dir, sha256);
  if (bytes === null) {
    const again = await convertFile({ absPath: file.absPath, type });
    if ('unreadable' in again || !again.result.ok || !('markdownSha256' in again) || again.markdownSha256 !== sha256)
      throw new KbsyncError(
        'file_changed',
        `${file.absPath}: its Markdown is not what was planned (converted again, it differs): not sent; the next run converts it again`,
      );
    new ConversionCache(join(dir, '..')).keep(
      type,
      again.readSha256,
      { ok: true, sha256, bytes: again.markdownBytes, units: again.result.units },
      again.result.markdown,
    );
    bytes = readMarkdown(dir, sha256);
    if (bytes === null)
      throw new KbsyncError('state_write_failed', `${dir}: the converted Markdown of ${file.absPath} could not be kept: not sent`);
  }
  return { path: markdownPath(dir, sha256), size: bytes.byteLength };
}

/** The reprocess call for a remote copy the service failed to process. */
export function reprocessTask(source: string, path: string, remoteId: string, reason: string, client: KnowledgeClient): PaidTask {
  return {
    op: { kind: 'reprocess', source, path, remoteId, credits: costOf({ kind: 'reprocess' }), reason },
    perform: async (op: OutboxOp) => {
      const r = await client.reprocessFile(remoteId, { idempotencyKey: op.idempotencyKey });
      return { outcome: 'done', creditsCharged: r.creditsCharged, remoteId: r.id, remoteStatus: toRemoteStatus(r.status) };
    },
  };
}
