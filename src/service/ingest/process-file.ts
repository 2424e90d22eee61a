import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { extensionOf } from '../../shared/file-types.js';
import { isKbsyncError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { processingError } from '../../shared/processing-errors.js';
import { beginChunkReplace, type ChunkReplace } from '../store/chunks.js';
import { markFileFailed, markFileProcessed, releaseFile, type ClaimedFile } from '../store/processing.js';
import type { ChunkSource } from './chunk-source.js';

type FileContext = {
  db: Database;
  logger: Logger;
  /** Parses and chunks the file (the ingest pool's workers), handing its chunks in batches of one transaction each. */
  source: ChunkSource;
  now: () => string;
  /** True once the worker is asked to stop: the file is put back in the queue at the next batch. */
  isStopping: () => boolean;
};

export type FileOutcome = 'processed' | 'failed' | 'released' | 'no-space';

/** The service's own disk is full: the file is not at fault, and a retry once there is space will pass. */
export function isOutOfSpace(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT';
}

class Stopped extends Error {}

/**
 * The text a user sees for a processing failure, after a stable code that says whether a reprocess can
 * help (docs/api.md): parse errors as written, file-system errors by code, never a server path.
 */
function failureText(err: unknown): string {
  if (isKbsyncError(err, 'parse_failed')) return processingError('parse_failed', err.message);
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return processingError('file_missing', 'the stored copy of the file is missing; upload it again');
  if (typeof code === 'string') return processingError('internal', `could not read the stored file (${code})`);
  return processingError('internal', 'internal error while processing the file');
}

/** Parses, chunks and indexes one claimed file; the old chunks stay searchable until the new ones are complete. */
export async function processFile(ctx: FileContext, file: ClaimedFile): Promise<FileOutcome> {
  if (!ctx.source.supports(file.name)) {
    const ext = extensionOf(file.name);
    const text = ext === '' ? 'no parser for files without an extension' : `no parser for .${ext} files`;
    markFileFailed(ctx.db, file.id, processingError('unsupported_type', text), ctx.now());
    return 'failed';
  }
  let replace: ChunkReplace | undefined;
  try {
    replace = beginChunkReplace(ctx.db, { datasetId: file.datasetId, sourceId: file.id, title: file.name });
    for await (const batch of ctx.source.fileBatches(file)) {
      replace.add(batch);
      // Let requests in between writes.
      await nextTurn();
      if (ctx.isStopping()) throw new Stopped();
    }
    replace.commit((count) => markFileProcessed(ctx.db, file.id, count, ctx.now()));
    return 'processed';
  } catch (err) {
    replace?.abort();
    // A parse ended by the stop (its worker terminated) is not the file's fault either.
    if (err instanceof Stopped || ctx.isStopping()) {
      releaseFile(ctx.db, file.id, ctx.now());
      return 'released';
    }
    if (isOutOfSpace(err)) {
      // The service failed, not the document: it waits in the queue (never failed, so never a paid reprocess).
      ctx.logger.error({ err, fileId: file.id }, 'no space left to store the chunks of a file: it waits in the queue');
      releaseFile(ctx.db, file.id, ctx.now());
      return 'no-space';
    }
    const text = failureText(err);
    if (!isKbsyncError(err, 'parse_failed')) ctx.logger.error({ err, fileId: file.id }, 'file processing failed');
    markFileFailed(ctx.db, file.id, text, ctx.now());
    return 'failed';
  }
}
