/**
 * Worker-thread entry (compiled JS only, see folder-walks.ts): walks each folder source of
 * `workerData.specs` in turn and posts each result, packed, as soon as it is done.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isKbsyncError } from '../../shared/errors.js';
import { scanFolder, type FolderSourceSpec } from './folder.js';
import { packScan } from './scan-codec.js';
import type { WalkReply } from './walk-reply.js';

const port = parentPort;
if (port === null) throw new Error('walk-worker.js runs as a worker thread only');
for (const spec of (workerData as { specs: FolderSourceSpec[] }).specs) {
  let reply: WalkReply;
  try {
    reply = { kind: 'scan', packed: packScan(spec.name, spec.root, scanFolder(spec)) };
  } catch (err) {
    reply = { kind: 'error', source: spec.name, code: isKbsyncError(err) ? err.code : null, message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply, reply.kind === 'scan' ? [reply.packed.sizes.buffer as ArrayBuffer, reply.packed.inodes.buffer as ArrayBuffer] : []);
}
