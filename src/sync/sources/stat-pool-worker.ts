/** Worker-thread entry of StatPool's helper (stat-pool.ts): answers the batches of paths posted on the port it is given. */
import { workerData, type MessagePort } from 'node:worker_threads';
import { serveLstatBatches } from './stat-pool.js';

serveLstatBatches((workerData as { port: MessagePort }).port);
