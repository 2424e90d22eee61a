import type { ChunkInput } from '../store/chunks.js';
import type { ChunkOptions } from './chunk-options.js';
import type { BatchOptions } from './chunk-source.js';
import type { ParseOptions } from './types.js';

/** A file to parse and chunk. */
export type FileTask = { path: string; name: string; parsing: ParseOptions; chunking: ChunkOptions } & BatchOptions;
/** An intelligence entry to chunk. */
export type EntryTask = { title: string | null; content: string; chunking: ChunkOptions };

/**
 * What an ingest pool's worker thread (ingest-worker.ts) serves, one task at a time. A file's
 * chunks come a batch per call: `file` answers the first, `more` (once the last one is written)
 * the next, null when the file is done, which keeps at most one batch in flight. A failure crosses
 * as its error: `parse_failed`, an errno code, or ERR_WORKER_OUT_OF_MEMORY from a thread the parser started.
 */
export type IngestApi = {
  /** Answered once the worker has loaded its modules (a task's time limit starts after). */
  ready(req: undefined): void;
  file(task: FileTask): ChunkInput[] | null;
  more(req: undefined): ChunkInput[] | null;
  entry(task: EntryTask): string[];
};
