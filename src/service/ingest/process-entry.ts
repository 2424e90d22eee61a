import type { Database } from 'better-sqlite3';
import type { Logger } from '../../shared/logger.js';
import { replaceChunks } from '../store/chunks.js';
import { markEntryFailed, markEntryProcessed, type PendingEntry } from '../store/processing.js';
import type { ChunkSource } from './chunk-source.js';
import { writeTransaction } from '../store/write-transaction.js';

export type IntelligenceEventKind = 'intelligence.processed' | 'intelligence.failed';
export type IntelligenceEventEntry = { id: number; datasetId: number; agentId: number; sha256: string; error?: string };
export type IntelligenceEventSink = (kind: IntelligenceEventKind, entry: IntelligenceEventEntry) => void;

type EntryContext = {
  db: Database;
  logger: Logger;
  source: ChunkSource;
  now: () => string;
  onEvent: IntelligenceEventSink;
  /** True once the service stops: a chunking ended by the stop leaves the entry pending for the next start. */
  isStopping?: () => boolean;
};

/** Indexes one pending entry (`pending → processed | failed`, chunks and status in one transaction) and reports the event. */
export async function processEntry(ctx: EntryContext, entry: PendingEntry): Promise<void> {
  const base = { id: entry.id, datasetId: entry.datasetId, agentId: entry.agentId, sha256: entry.sha256 };
  let error: string | undefined;
  try {
    const chunks = await ctx.source.entryChunks(entry);
    if (chunks.length === 0) error = 'the entry has no text to index';
    else {
      const done = writeTransaction(ctx.db, () => {
        replaceChunks(ctx.db, { datasetId: entry.datasetId, sourceId: entry.id, title: entry.title, chunks });
        return markEntryProcessed(ctx.db, entry.id, ctx.now());
      })();
      if (done) emit(ctx, 'intelligence.processed', base);
      return;
    }
  } catch (err) {
    // Its worker was terminated by the stop: not the entry's fault; it is still pending.
    if (ctx.isStopping?.() === true) return;
    ctx.logger.error({ err, entryId: entry.id }, 'intelligence processing failed');
    error = 'internal error while indexing the entry';
  }
  if (markEntryFailed(ctx.db, entry.id, error, ctx.now())) emit(ctx, 'intelligence.failed', { ...base, error });
}

function emit(ctx: EntryContext, kind: IntelligenceEventKind, entry: IntelligenceEventEntry): void {
  try {
    ctx.onEvent(kind, entry);
  } catch (err) {
    ctx.logger.error({ err, kind, entryId: entry.id }, 'intelligence event handler failed');
  }
}
