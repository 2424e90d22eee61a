import { stat } from 'node:fs';
import { setPriority } from 'node:os';

/** The nice value of a thread that parses: a core goes to the thread that answers requests first. */
export const PARSE_THREAD_NICE = 10;

/**
 * Lowers the calling thread's CPU priority to PARSE_THREAD_NICE, so that when a parse and a request
 * compete for a core (fewer cores than busy threads), the request's thread is scheduled first; on
 * an idle core the parse runs at full speed. Linux only, where nice is a property of each thread
 * (threads the caller starts later inherit it); elsewhere it is the whole process's and is left
 * alone. Returns whether the priority was lowered.
 */
export function lowerParseThreadPriority(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    // pid 0: the calling thread, on Linux.
    setPriority(0, PARSE_THREAD_NICE);
    return true;
  } catch {
    // A sandbox that forbids it: the parse runs at normal priority.
    return false;
  }
}

let threadpoolStarted = false;

/**
 * Starts libuv's threadpool from the calling thread if nothing has yet. Its threads are the whole
 * process's (file system, crypto, zlib) and take the nice value of the thread that happens to start
 * them: call this on the main thread before starting a thread that lowers its priority.
 */
export function startThreadpoolHere(): void {
  if (threadpoolStarted) return;
  threadpoolStarted = true;
  // The first request to the pool starts its threads, synchronously, on the calling thread.
  stat('.', () => {});
}
