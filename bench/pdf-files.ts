import { writeFileSync } from 'node:fs';
import { zlibSync } from 'fflate';

/**
 * A long PDF written from scratch, for the PDF conversion benchmark (bench/pdf-convert.ts): no tool
 * needed, deterministic (a seeded word picker). Each page has a heading in Helvetica-Bold, body
 * paragraphs in Helvetica wrapped at a fixed width, and a page number at the foot, as a typical
 * report's pages do; content streams are Flate-compressed, as the usual tools write them.
 */

const WORDS =
  'the survey measured channel depth at forty stations during spring tides harbour board silt river customs pier lighthouse quay dredging winter storms echo sounder tide gauge archive calibration'.split(
    ' ',
  );

/** Escapes a string for a PDF literal string `( )`. */
function pdfString(s: string): string {
  return s.replace(/[\\()]/g, (c) => `\\${c}`);
}

/** Helvetica's advance widths (thousandths of the font size) of the characters the pages use. */
const HELVETICA: Record<string, number> = { ' ': 278, '.': 278, ':': 278 };
'abcdefghijklmnopqrstuvwxyz'.split('').forEach((c, i) => {
  HELVETICA[c] = [
    556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500,
  ][i] as number;
});
const textWidth = (s: string, size: number): number => [...s].reduce((w, c) => w + (HELVETICA[c] ?? 556), 0) * (size / 1000);

/** The text column's width: an A4 page less margins of an inch. */
const COLUMN = 595 - 2 * 72;

/** One page's content stream: a heading, paragraphs wrapped to the column as a word processor wraps them, and the page number. */
function pageContent(page: number, word: () => string): string {
  const title = `Section ${page}: the ${word()} ${word()}`;
  const ops: string[] = ['BT', '/F2 16 Tf', '72 740 Td', `(${pdfString(title)}) Tj`, 'ET'];
  let y = 712;
  let next = word();
  while (y > 90) {
    const paragraphLines = 3 + (next.length % 5);
    for (let l = 0; l < paragraphLines && y > 90; l++) {
      let line = next;
      next = word();
      while (textWidth(`${line} ${next}`, 10) <= COLUMN) {
        line += ` ${next}`;
        next = word();
      }
      ops.push('BT', '/F1 10 Tf', `72 ${y} Td`, `(${pdfString(l === paragraphLines - 1 ? `${line}.` : line)}) Tj`, 'ET');
      y -= 13;
    }
    y -= 9;
  }
  ops.push('BT', '/F1 9 Tf', '290 40 Td', `(${page}) Tj`, 'ET');
  return ops.join('\n');
}

/** The bytes of a PDF of `pages` A4 pages (see the module comment). */
export function manyPagePdf(pages: number): Buffer {
  let seed = 7;
  const word = (): string => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return WORDS[(seed >>> 16) % WORDS.length] as string;
  };
  const chunks: Buffer[] = [];
  const offsets: number[] = [];
  let size = 0;
  const push = (b: Buffer): void => {
    chunks.push(b);
    size += b.length;
  };
  const object = (id: number, body: Buffer | string): void => {
    offsets[id] = size;
    push(Buffer.from(`${id} 0 obj\n`, 'latin1'));
    push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
    push(Buffer.from('\nendobj\n', 'latin1'));
  };
  push(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'));
  const firstPage = 5;
  const kids = Array.from({ length: pages }, (_, i) => `${firstPage + 2 * i} 0 R`).join(' ');
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, `<< /Type /Pages /Count ${pages} /Kids [${kids}] >>`);
  object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  object(4, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>');
  for (let p = 0; p < pages; p++) {
    const id = firstPage + 2 * p;
    object(
      id,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents ${id + 1} 0 R >>`,
    );
    const stream = Buffer.from(zlibSync(Buffer.from(pageContent(p + 1, word), 'latin1')));
    object(
      id + 1,
      Buffer.concat([
        Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'),
        stream,
        Buffer.from('\nendstream'),
      ]),
    );
  }
  const count = firstPage + 2 * pages;
  const xref = size;
  const rows = ['xref', `0 ${count}`, '0000000000 65535 f '];
  for (let id = 1; id < count; id++) rows.push(`${String(offsets[id]).padStart(10, '0')} 00000 n `);
  push(Buffer.from(`${rows.join('\n')}\ntrailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(chunks);
}

/** Writes manyPagePdf(pages) to `path`. */
export function writeManyPagePdf(path: string, pages: number): void {
  writeFileSync(path, manyPagePdf(pages));
}
