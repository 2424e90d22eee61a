import { resourceLimits } from 'node:worker_threads';
import { isKbsyncError } from '../../../shared/errors.js';
import { channel, type Channel } from '../../../shared/worker-channel.js';
import { startWorker, workerEntry } from '../../../shared/worker-entry.js';
import type { Section } from '../types.js';
import type { WorkbookFormat } from './office-messages.js';

/**
 * What an office worker thread (office-worker.ts) does: convert a DOCX (its checked, re-stored ZIP)
 * to HTML; or read a workbook, then answer its sections a batch at a time until `done`. A bad
 * document fails `parse_failed`.
 */
export type OfficeApi = {
  docx(data: Uint8Array): string;
  workbook(req: { format: WorkbookFormat; data: Uint8Array }): void;
  next(req: undefined): { sections: Section[]; done: boolean };
};

const WORKER_ENTRY = workerEntry('office-worker', import.meta.url);

/**
 * An office worker thread of its own, so that mammoth and SheetJS never hold the service's event
 * loop: other requests are answered while a large document is read. The caller closes it when done.
 */
function startOffice(): Channel<OfficeApi> {
  // Started from an ingest worker, it gets that worker's memory limit (resourceLimits is empty on the main thread).
  return channel<OfficeApi>(startWorker(WORKER_ENTRY, { resourceLimits }), { name: 'office document worker' });
}

/** A failure other than `parse_failed` (or the thread's own end, which names it) as an Error naming the thread. */
function named(err: unknown): unknown {
  if (isKbsyncError(err) || !(err instanceof Error) || err.message.startsWith('the office document worker')) return err;
  return new Error(`office document worker: ${err.message}`, { cause: err });
}

/** The task's bytes, moved to the thread rather than copied (a view of part of a buffer is copied first). */
const owned = (data: Uint8Array): Uint8Array => (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice());

/** mammoth's HTML of a DOCX (its ZIP checked and re-stored by office-zip.ts), converted in a worker thread. */
export async function docxHtmlInThread(zip: Buffer): Promise<string> {
  const office = startOffice();
  try {
    const data = owned(zip);
    return await office.call('docx', data, [data.buffer as ArrayBuffer]);
  } catch (err) {
    throw named(err);
  } finally {
    await office.close();
  }
}

/** A workbook's sections (spreadsheet.ts workbookSections), read by SheetJS in a worker thread; ending the iteration early ends it. */
export async function* workbookSectionsInThread(data: Buffer, format: WorkbookFormat): AsyncGenerator<Section> {
  const office = startOffice();
  try {
    const moved = owned(data);
    await office.call('workbook', { format, data: moved }, [moved.buffer as ArrayBuffer]);
    for (;;) {
      const { sections, done } = await office.call('next', undefined);
      yield* sections;
      if (done) return;
    }
  } catch (err) {
    throw named(err);
  } finally {
    await office.close();
  }
}
