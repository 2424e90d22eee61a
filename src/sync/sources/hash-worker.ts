/** Worker-thread entry of a hash thread (hash-thread.ts): hashes the batches of files its parent posts. */
import { parentPort } from 'node:worker_threads';
import { serveHashBatches } from './hash-file.js';

if (parentPort === null) throw new Error('hash-worker.js runs as a worker thread only');
serveHashBatches(parentPort);
