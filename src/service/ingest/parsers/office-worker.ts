/**
 * Worker-thread entry of the office parsers (office-thread.ts): mammoth's DOCX conversion and
 * SheetJS's workbook reading are synchronous and take seconds on a large document, so they run
 * here, off the service's event loop. One document per thread: a DOCX's HTML in one answer, or a
 * workbook's sections a batch at a time, each asked for by the thread's starter (OfficeApi).
 */
import { parseFailed } from '../parse-error.js';
import type { Section } from '../types.js';
import { serve } from '../../../shared/worker-channel.js';
import { describeMammothError } from './office-messages.js';
import type { OfficeApi } from './office-thread.js';
import { readWorkbook, workbookSections } from './spreadsheet.js';

/** Sections answered per `next`. */
const BATCH = 64;
const asBuffer = (data: Uint8Array): Buffer => Buffer.from(data.buffer, data.byteOffset, data.byteLength);
let sections: AsyncIterator<Section> | undefined;

serve<OfficeApi>({
  async docx(data) {
    const { default: mammoth } = await import('mammoth');
    let result;
    try {
      result = await mammoth.convertToHtml(
        { buffer: asBuffer(data) },
        // Images are never read (their src stays empty); files outside the document are never opened.
        { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })), externalFileAccess: false },
      );
    } catch (err) {
      throw parseFailed(describeMammothError(err instanceof Error ? err.message : String(err)));
    }
    return result.value;
  },
  async workbook({ format, data }) {
    sections = workbookSections(await readWorkbook(asBuffer(data), format))[Symbol.asyncIterator]();
  },
  async next() {
    if (sections === undefined) throw new Error('no workbook was read');
    const batch: Section[] = [];
    while (batch.length < BATCH) {
      const step = await sections.next();
      if (step.done === true) return { sections: batch, done: true };
      batch.push(step.value);
    }
    return { sections: batch, done: false };
  },
});
