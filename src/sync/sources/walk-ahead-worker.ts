/** Worker-thread entry of the helper that walks ahead of the walk (walk-ahead.ts). */
import { workerData } from 'node:worker_threads';
import { helpWalk, type HelperData } from './walk-ahead.js';

helpWalk(workerData as HelperData);
