import type { ChunkInput } from '../store/chunks.js';
import type { ChunkOptions } from './chunk-options.js';
import type { BatchOptions } from './chunk-source.js';
import type { ParseOptions } from './types.js';

/** What the ingest pool asks of one of its worker threads (ingest-worker.ts), one task at a time. */
export type IngestTask =
  | ({ type: 'file'; path: string; name: string; parsing: ParseOptions; chunking: ChunkOptions } & BatchOptions)
  | { type: 'entry'; title: string | null; content: string; chunking: ChunkOptions }
  /** The batch last posted is written: go on with the file. */
  | { type: 'more' };

/** Why a task failed, as it crosses threads: a parse failure's text, an errno code, or an internal error. */
export type TaskFailure =
  | { kind: 'parse_failed'; message: string }
  | { kind: 'errno'; code: string; message: string }
  /** A worker the parser started (the office documents' thread) ran out of its memory limit. */
  | { kind: 'out_of_memory' }
  | { kind: 'internal'; message: string };

export type IngestReply =
  /** Posted once, when the worker has loaded its modules (a task's time limit starts after). */
  | { type: 'ready' }
  | { type: 'batch'; chunks: ChunkInput[] }
  | { type: 'done' }
  | { type: 'entry'; chunks: string[] }
  | { type: 'failed'; failure: TaskFailure };
