import { availableParallelism } from 'node:os';
import PQueue from 'p-queue';
import { channel, type Channel } from '../shared/worker-channel.js';
import { startWorker, workerEntry } from '../shared/worker-entry.js';
import type { ConvertAnswer, ConvertRequest } from './convert-file.js';

export type ConvertApi = { convert: (req: ConvertRequest) => ConvertAnswer };

export type ConvertPoolOptions = {
  /** Threads converting at once, one file each. @default os.availableParallelism() */
  workers?: number;
  /** Longest one file's conversion may take; past it the thread is ended and the file fails naming the limit. */
  timeLimitMs: number;
  /** Largest old-generation heap of a converting thread, in MB; past it the file fails naming the limit. */
  memoryLimitMb: number;
  /** Test hook: what a thread runs instead of convert-worker (source text). */
  worker?: URL | string;
};

export type ConvertPool = {
  convert(req: ConvertRequest): Promise<ConvertAnswer>;
  /** Ends every thread; calls still waiting fail. */
  close(): Promise<void>;
};

const WORKER_ENTRY = workerEntry('convert-worker', import.meta.url);

/**
 * Conversions in worker threads, each file under a time and a memory limit: a thread past either is
 * ended and replaced, and its file gets a `convert-failed` answer that names the limit and the setting
 * that raises it. Threads start on first use and are kept for the next file until close().
 */
export function createConvertPool(o: ConvertPoolOptions): ConvertPool {
  const size = Math.max(1, o.workers ?? availableParallelism());
  const queue = new PQueue({ concurrency: size });
  const idle: Channel<ConvertApi>[] = [];
  const all = new Set<Channel<ConvertApi>>();
  let closed = false;

  const start = (): Channel<ConvertApi> => {
    const worker = startWorker(o.worker ?? WORKER_ENTRY, {
      resourceLimits: { maxOldGenerationSizeMb: o.memoryLimitMb, maxYoungGenerationSizeMb: 16 },
    });
    const ch = channel<ConvertApi>(worker, { name: 'conversion thread', unref: true });
    all.add(ch);
    return ch;
  };

  const run = async (req: ConvertRequest): Promise<ConvertAnswer> => {
    if (closed) throw new Error('the conversion pool is closed');
    const ch = idle.pop() ?? start();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), o.timeLimitMs);
    });
    try {
      const answer = await Promise.race([ch.call('convert', req), timedOut]);
      if (answer === 'timeout') {
        await drop(ch);
        return failedAnswer(`its conversion took longer than ${o.timeLimitMs / 1000} s (limits.convertSeconds): stopped`);
      }
      idle.push(ch);
      return answer;
    } catch (err) {
      await drop(ch);
      const code = (err as { code?: string }).code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY')
        return failedAnswer(`its conversion needed more than ${o.memoryLimitMb} MB of memory (limits.convertMemoryMb): stopped`);
      return { ...failedAnswer(`the converter failed on it (${err instanceof Error ? err.message : String(err)})`), passing: true };
    } finally {
      clearTimeout(timer);
    }
  };

  const drop = async (ch: Channel<ConvertApi>): Promise<void> => {
    all.delete(ch);
    await ch.close();
  };

  return {
    convert: (req) => queue.add(() => run(req)) as Promise<ConvertAnswer>,
    async close() {
      closed = true;
      queue.clear();
      await Promise.all([...all].map((ch) => ch.close()));
      all.clear();
      idle.length = 0;
    },
  };
}

/** A failure found by the pool, not the converter: the file's bytes were never hashed by the thread. */
function failedAnswer(reason: string): ConvertAnswer & { readSha256: '' } {
  return { readSha256: '', result: { ok: false, skip: 'convert-failed', reason } };
}
