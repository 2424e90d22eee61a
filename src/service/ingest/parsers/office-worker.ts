/**
 * Worker-thread entry of the office parsers (office-thread.ts): mammoth's DOCX conversion and
 * SheetJS's workbook reading are synchronous and take seconds on a large document, so they run
 * here, off the service's event loop. One task per thread, given as workerData; the answer is
 * posted back (OfficeReply) and the thread ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isKbsyncError } from '../../../shared/errors.js';
import type { Section } from '../types.js';
import { describeMammothError } from './office-messages.js';
import type { OfficeReply, OfficeTask } from './office-thread.js';
import { readWorkbook, workbookSections } from './spreadsheet.js';

const port = parentPort;
if (port === null) throw new Error('office-worker.js runs as a worker thread only');
const task = workerData as OfficeTask;
const post = (reply: OfficeReply): void => port.postMessage(reply);
/** Sections are posted this many at a time. */
const BATCH = 64;

async function run(): Promise<void> {
  const data = Buffer.from(task.data.buffer, task.data.byteOffset, task.data.byteLength);
  if (task.kind === 'docx') {
    const { default: mammoth } = await import('mammoth');
    try {
      const result = await mammoth.convertToHtml(
        { buffer: data },
        // Images are never read (their src stays empty); files outside the document are never opened.
        { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })), externalFileAccess: false },
      );
      post({ type: 'html', html: result.value });
    } catch (err) {
      post({ type: 'parse_failed', message: describeMammothError(err instanceof Error ? err.message : String(err)) });
    }
    return;
  }
  const workbook = await readWorkbook(data, task.kind);
  let batch: Section[] = [];
  for await (const section of workbookSections(workbook)) {
    batch.push(section);
    if (batch.length >= BATCH) {
      post({ type: 'sections', sections: batch });
      batch = [];
    }
  }
  post({ type: 'sections', sections: batch });
  post({ type: 'done' });
}

run().then(
  () => port.close(),
  (err: unknown) => {
    post(
      isKbsyncError(err, 'parse_failed')
        ? { type: 'parse_failed', message: err.message }
        : { type: 'error', message: err instanceof Error ? err.message : String(err) },
    );
    port.close();
  },
);
