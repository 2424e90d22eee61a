/**
 * Worker-thread entry of the ingest pool (ingest-pool.ts): parses and chunks one file or entry at a
 * time, off the service's event loop, so that the parsers, the chunker and gpt-tokenizer's tables
 * are loaded here and never on the thread that answers requests. A file's chunks are posted a batch
 * at a time; the next batch is read once the service says the last one is written (`more`), which
 * keeps at most one batch in flight.
 */
import { parentPort } from 'node:worker_threads';
import { isKbsyncError } from '../../shared/errors.js';
import { lowerParseThreadPriority } from './background-priority.js';
import { entryChunks, fileChunkBatches } from './chunk-source.js';
import type { IngestReply, IngestTask, TaskFailure } from './ingest-messages.js';
import { parserFor } from './registry.js';

const port = parentPort;
if (port === null) throw new Error('ingest-worker.js runs as a worker thread only');
const post = (reply: IngestReply): void => port.postMessage(reply);
// Requests first: a parse gets a core the service's own thread does not need.
lowerParseThreadPriority();

let resume: (() => void) | undefined;
const tasks: IngestTask[] = [];
let running = false;

function failureOf(err: unknown): TaskFailure {
  if (isKbsyncError(err, 'parse_failed')) return { kind: 'parse_failed', message: err.message };
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return { kind: 'out_of_memory' };
  // The worker's stack is a limit too: input nested deeper than a parser's recursion can follow.
  if (err instanceof RangeError && /call stack size/i.test(err.message)) {
    return {
      kind: 'parse_failed',
      message: 'nested too deeply for the parser (its stack limit); refused (is the file generated or hostile?)',
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === 'string') return { kind: 'errno', code, message };
  return { kind: 'internal', message };
}

async function runTask(task: Exclude<IngestTask, { type: 'more' }>): Promise<void> {
  if (task.type === 'entry') {
    post({ type: 'entry', chunks: entryChunks(task, task.chunking) });
    return;
  }
  const parser = parserFor(task.name);
  if (parser === undefined) throw new Error(`no parser for ${task.name}`);
  for await (const chunks of fileChunkBatches(parser, task.path, task)) {
    const written = new Promise<void>((resolve) => (resume = resolve));
    post({ type: 'batch', chunks });
    await written;
  }
  post({ type: 'done' });
}

async function drain(): Promise<void> {
  if (running) return;
  running = true;
  for (let task = tasks.shift(); task !== undefined; task = tasks.shift()) {
    if (task.type === 'more') continue;
    try {
      await runTask(task);
    } catch (err) {
      post({ type: 'failed', failure: failureOf(err) });
    }
  }
  running = false;
}

port.on('message', (task: IngestTask) => {
  if (task.type === 'more') {
    const go = resume;
    resume = undefined;
    go?.();
    return;
  }
  tasks.push(task);
  void drain();
});
post({ type: 'ready' });
