import { resourceLimits, type Worker } from 'node:worker_threads';
import { startWorker, workerEntry } from '../../../shared/worker-entry.js';
import { parseFailed } from '../parse-error.js';
import type { Section } from '../types.js';
import type { WorkbookFormat } from './office-messages.js';

/** What an office worker thread is asked to do: convert a DOCX (its checked, re-stored ZIP) or read a workbook. */
export type OfficeTask = { kind: 'docx'; data: Uint8Array } | { kind: WorkbookFormat; data: Uint8Array };

/** What it answers: the DOCX's HTML; a workbook's sections, in batches, then `done`; or why it failed. */
export type OfficeReply =
  | { type: 'html'; html: string }
  | { type: 'sections'; sections: Section[] }
  | { type: 'done' }
  | { type: 'parse_failed'; message: string }
  | { type: 'error'; message: string };

const WORKER_ENTRY = workerEntry('office-worker', import.meta.url);

/**
 * Runs `task` in a worker thread of its own (office-worker.ts) and yields its replies as they come,
 * so that mammoth and SheetJS never hold the service's event loop: other requests are answered while
 * a large document is read. The task's bytes are moved to the thread, not copied. A `parse_failed`
 * reply throws `parse_failed` with its text; a thread that fails otherwise throws an Error. Ending
 * the iteration early stops the thread.
 */
async function* officeReplies(task: OfficeTask): AsyncGenerator<OfficeReply> {
  const queue: OfficeReply[] = [];
  let failure: Error | undefined;
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  const owned = task.data.byteOffset === 0 && task.data.byteLength === task.data.buffer.byteLength ? task.data : task.data.slice();
  // Started from an ingest worker, it gets that worker's memory limit (resourceLimits is empty on the main thread).
  const worker: Worker = startWorker(WORKER_ENTRY, {
    workerData: { ...task, data: owned },
    transferList: [owned.buffer as ArrayBuffer],
    resourceLimits,
  });
  worker.on('message', (reply: OfficeReply) => {
    queue.push(reply);
    notify();
  });
  worker.on('error', (err) => {
    failure = err;
    notify();
  });
  worker.on('exit', () => {
    ended = true;
    notify();
  });
  try {
    for (;;) {
      const reply = queue.shift();
      if (reply !== undefined) {
        if (reply.type === 'parse_failed') throw parseFailed(reply.message);
        if (reply.type === 'error') throw new Error(`office document worker: ${reply.message}`);
        yield reply;
        continue;
      }
      if (failure !== undefined) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    if (!ended) await worker.terminate();
  }
}

/** mammoth's HTML of a DOCX (its ZIP checked and re-stored by office-zip.ts), converted in a worker thread. */
export async function docxHtmlInThread(zip: Buffer): Promise<string> {
  for await (const reply of officeReplies({ kind: 'docx', data: zip })) {
    if (reply.type === 'html') return reply.html;
  }
  throw new Error('office document worker: ended without an answer');
}

/** A workbook's sections (spreadsheet.ts workbookSections), read by SheetJS in a worker thread. */
export async function* workbookSectionsInThread(data: Buffer, format: WorkbookFormat): AsyncGenerator<Section> {
  for await (const reply of officeReplies({ kind: format, data })) {
    if (reply.type === 'sections') yield* reply.sections;
    if (reply.type === 'done') return;
  }
  throw new Error('office document worker: ended before the workbook was read');
}
