import { bodyStats, pageBlocks, type Block } from './pdf-blocks.js';
import { dropFurniture } from './pdf-furniture.js';
import { pageLines, type Box, type Line, type PdfTextItem } from './pdf-layout.js';
import { headingLevels, pageMarkdown } from './pdf-markdown.js';
import { outlineTitles } from './pdf-outline.js';
import { findTables } from './pdf-tables.js';
import type { ConvertResult, Converter } from './types.js';
import type * as PdfJsModule from 'unpdf/pdfjs';

/**
 * PDF to Markdown with pdf.js (unpdf's build of it: one module, no worker of its own, no DOM, no
 * canvas; docs/convert.md says why). The text layer is read page by page in the order the page
 * sets it, then laid out: headers and footers dropped, tables found, paragraphs and list items
 * rejoined, headings found from font size and weight, a `<!-- page N -->` marker before each page.
 * pdf.js is told to load no font face and no system font, and to fetch nothing: no standard font,
 * CMap or wasm URL is given, so a font the file does not embed is read with the metrics it carries
 * or pdf.js's own. pdf.js 6 compiles nothing with eval (its `isEvalSupported` option went with that
 * code path).
 */

type PdfJs = typeof PdfJsModule;

let pdfjs: Promise<PdfJs> | null = null;
/** Loaded at the first conversion: a process that never converts a PDF never evaluates pdf.js. */
const loadPdfJs = (): Promise<PdfJs> => (pdfjs ??= import('unpdf/pdfjs'));

const failed = (reason: string): ConvertResult => ({ ok: false, skip: 'convert-failed', reason });

/** Where a PDF's `%PDF-` header may start (readers accept leading junk up to here). */
const HEADER_WINDOW = 1024;

function hasBytes(bytes: Uint8Array, text: string, from: number, to: number): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(from, to).includes(text, 0, 'latin1');
}

/** A reason the bytes are not a whole PDF, before pdf.js is asked (it mends some truncated files into partial text). */
function notAWholePdf(bytes: Uint8Array): string | null {
  if (bytes.byteLength === 0) return 'the file is empty: it is not a PDF';
  if (!hasBytes(bytes, '%PDF-', 0, HEADER_WINDOW))
    return 'the file does not start with a PDF header (%PDF-): it is not a PDF, whatever its name says';
  if (!hasBytes(bytes, '%%EOF', 0, bytes.byteLength))
    return "the file ends before the PDF's end-of-file marker (%%EOF): it is truncated, or damaged on the way";
  return null;
}

const errorName = (err: unknown): string =>
  err instanceof Error || (typeof err === 'object' && err !== null) ? String((err as { name?: unknown }).name) : '';
const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function openFailure(err: unknown): ConvertResult {
  const name = errorName(err);
  if (name === 'PasswordException')
    return {
      ok: false,
      skip: 'encrypted',
      reason: 'the PDF is protected by a password, which kbsync does not ask for: save a copy without the password to have it converted',
    };
  if (name === 'InvalidPDFException')
    return failed(`the PDF's structure cannot be read (${errorMessage(err)}): the file is damaged or not a PDF`);
  return failed(`the PDF cannot be opened (${errorMessage(err)}): the file is damaged`);
}

type Read = { pages: { lines: Line[]; box: Box }[]; monospace: Set<string>; titles: Set<string> };

/** Every page's lines, read one page at a time (a page's text content is dropped once laid out). */
async function readPages(lib: PdfJs, bytes: Uint8Array): Promise<Read | ConvertResult> {
  const task = lib.getDocument({
    // A copy: pdf.js may take the buffer it is given, and the caller's bytes stay theirs.
    data: bytes.slice(),
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    useWasm: false,
    isOffscreenCanvasSupported: false,
    enableXfa: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    let doc;
    try {
      doc = await task.promise;
    } catch (err) {
      return openFailure(err);
    }
    const pages: Read['pages'] = [];
    const monospace = new Set<string>();
    for (let n = 1; n <= doc.numPages; n++) {
      try {
        const page = await doc.getPage(n);
        const content = await page.getTextContent();
        for (const [font, style] of Object.entries(content.styles)) if (style.fontFamily === 'monospace') monospace.add(font);
        const items = content.items.filter((i): i is PdfTextItem & typeof i => 'str' in i);
        pages.push(pageLines(n, items, page.view));
        page.cleanup();
      } catch (err) {
        return failed(`page ${n} of ${doc.numPages} cannot be read (${errorMessage(err)}): the file is damaged`);
      }
    }
    // A damaged outline costs the headings' confirmation, not the conversion.
    const titles = outlineTitles(await doc.getOutline().catch(() => null));
    return { pages, monospace, titles };
  } finally {
    await task.destroy();
  }
}

/** Converts a PDF's text layer to Markdown (see the module comment); never throws for a bad document. */
export const convertPdf: Converter = async (bytes, o) => {
  const broken = notAWholePdf(bytes);
  if (broken !== null) return failed(broken);
  let read: Read | ConvertResult;
  try {
    read = await readPages(await loadPdfJs(), bytes);
  } catch (err) {
    return failed(`the PDF cannot be read (${errorMessage(err)}): the file is damaged`);
  }
  if ('ok' in read) return read;
  const { pages, monospace, titles } = read;
  if (!pages.some((p) => p.lines.some((l) => /[\p{L}\p{N}]/u.test(l.text))))
    return {
      ok: false,
      skip: 'no-text',
      reason: `the PDF has no text layer on ${pages.length === 1 ? 'its one page' : `any of its ${pages.length} pages`} (a scanned document, or text in fonts with no Unicode mapping): kbsync does not run OCR, so there is no text to convert`,
    };
  const kept = dropFurniture(pages, bodyStats(pages.map((p) => p.lines)).size);
  const stats = bodyStats(kept);
  const blocks: Block[][] = kept.map((lines, i) => pageBlocks(i + 1, findTables(lines), stats));
  const levels = headingLevels(blocks, stats, monospace, titles);
  const parts: string[] = [];
  let chars = 0;
  for (let i = 0; i < blocks.length; i++) {
    const md = pageMarkdown(i + 1, blocks[i] as Block[], levels);
    chars += md.length + 2;
    if (chars > o.limits.maxOutputChars)
      return failed(
        `the PDF's Markdown runs past the limit of ${o.limits.maxOutputChars} characters (maxOutputChars) at page ${i + 1}: split the document, or raise maxOutputChars`,
      );
    parts.push(md);
  }
  return { ok: true, markdown: `${parts.join('\n\n')}\n`, units: pages.length };
};
