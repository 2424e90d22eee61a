/** Worker-thread entry of a conversion thread (pool.ts): converts the files its parent names, one at a time. */
import { parentPort } from 'node:worker_threads';
import { serve } from '../shared/worker-channel.js';
import { convertFile } from './convert-file.js';
import type { ConvertApi } from './pool.js';

if (parentPort === null) throw new Error('convert-worker.js runs as a worker thread only');
serve<ConvertApi>({ convert: convertFile });
