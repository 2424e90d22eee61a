/**
 * Worker-thread entry of the ingest pool (ingest-pool.ts): parses and chunks one file or entry at a
 * time, off the service's event loop, so that the parsers, the chunker and gpt-tokenizer's tables
 * are loaded here and never on the thread that answers requests. A file's chunks are answered a
 * batch at a time; the pool asks for the next (`more`) as soon as it has one, so the next batch is
 * read here while the last is written there.
 */
import type { ChunkInput } from '../store/chunks.js';
import { serve } from '../../shared/worker-channel.js';
import { lowerParseThreadPriority } from './background-priority.js';
import { entryChunks, fileChunkBatches } from './chunk-source.js';
import type { IngestApi } from './ingest-messages.js';
import { parseFailed } from './parse-error.js';
import { parserFor } from './registry.js';

// Requests first: a parse gets a core the service's own thread does not need.
lowerParseThreadPriority();

/** The file being read, between its batches. */
let batches: AsyncIterator<ChunkInput[]> | undefined;

/** The worker's stack is a limit too: input nested deeper than a parser's recursion can follow. */
function limitOf(err: unknown): unknown {
  if (err instanceof RangeError && /call stack size/i.test(err.message))
    return parseFailed('nested too deeply for the parser (its stack limit); refused (is the file generated or hostile?)');
  return err;
}

async function nextBatch(): Promise<ChunkInput[] | null> {
  if (batches === undefined) throw new Error('no file is being read');
  try {
    const step = await batches.next();
    if (step.done !== true) return step.value;
    batches = undefined;
    return null;
  } catch (err) {
    batches = undefined;
    throw limitOf(err);
  }
}

serve<IngestApi>({
  ready: () => undefined,
  file(task) {
    const parser = parserFor(task.name);
    if (parser === undefined) throw new Error(`no parser for ${task.name}`);
    batches = fileChunkBatches(parser, task.path, task)[Symbol.asyncIterator]();
    return nextBatch();
  },
  more: nextBatch,
  entry(task) {
    try {
      return entryChunks(task, task.chunking);
    } catch (err) {
      throw limitOf(err);
    }
  },
});
