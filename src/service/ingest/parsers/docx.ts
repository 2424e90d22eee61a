import { setImmediate as nextTurn } from 'node:timers/promises';
import { MIB } from '../../../shared/plans.js';
import { createHtmlSections } from '../html-sections.js';
import { DEFAULT_ZIP_LIMITS, readOfficeZip, storedZip, type ZipLimits } from '../office-zip.js';
import { parseFailed } from '../parse-error.js';
import { READ_PIECE_BYTES } from '../read-text.js';
import type { Parser, Section } from '../types.js';
import { headerFooterText } from './docx-headers.js';
import { docxHtmlInThread } from './office-thread.js';

/**
 * mammoth holds each part it reads as a DOM many times the size of the part's XML, so the XML it is
 * handed is limited.
 */
export const DOCX_ZIP_LIMITS: ZipLimits = { ...DEFAULT_ZIP_LIMITS, maxPartBytes: 8 * MIB, maxTotalBytes: 16 * MIB };

/** mammoth's HTML for a document is refused past this many characters (the text out is capped, whatever the parts held). */
export const MAX_DOCX_HTML_CHARS = 16 * MIB;

/** The parts mammoth and kbsync read: XML and relationships, never media, fonts or embedded files. */
const isTextPart = (name: string): boolean => /\.(xml|rels)$/i.test(name);
const HEADER_FOOTER = /^word\/(header|footer)(\d*)\.xml$/i;

async function* parseDocx(path: string, limits: ZipLimits): AsyncGenerator<Section> {
  const parts = await readOfficeZip(path, 'DOCX', isTextPart, limits);
  const headerFooters = [...parts.keys()]
    .map((name) => ({ name, match: HEADER_FOOTER.exec(name) }))
    .filter((p) => p.match !== null)
    .sort((a, b) => (a.match?.[1] ?? '').localeCompare(b.match?.[1] ?? '') || Number(a.match?.[2] || 0) - Number(b.match?.[2] || 0))
    .map((p) => parts.get(p.name) as Buffer);
  const extra = await headerFooterText(headerFooters);
  const zip = await storedZip(parts);
  parts.clear();

  // mammoth works synchronously for seconds on a large document: in a worker thread, off the event loop.
  const html = await docxHtmlInThread(zip);
  if (html.length > MAX_DOCX_HTML_CHARS) {
    throw parseFailed(`the DOCX document's text is over ${MAX_DOCX_HTML_CHARS / MIB} MiB once converted; split the document`);
  }

  const sections = await createHtmlSections({ docx: true });
  for (let at = 0; at < html.length; at += READ_PIECE_BYTES) {
    const out: Section[] = [];
    sections.write(html.slice(at, at + READ_PIECE_BYTES), out);
    yield* out;
    await nextTurn();
  }
  const out: Section[] = [];
  sections.end(out);
  yield* out;
  if (extra.length > 0) yield { heading: 'Headers and footers', text: extra.join('\n\n') };
}

/**
 * DOCX (mammoth): headings, lists, tables, footnotes and endnotes, then the page headers and
 * footers. Comments are not indexed (mammoth leaves them out: they are review notes, not the
 * document). The ZIP is checked before mammoth sees it (office-zip.ts); mammoth runs in a worker
 * thread (office-thread.ts).
 */
export const docxParser: Parser = {
  extensions: ['docx'],
  parse: (path) => parseDocx(path, DOCX_ZIP_LIMITS),
};

/** A DOCX parser with other ZIP limits (tests). */
export function docxParserWith(limits: ZipLimits): Parser {
  return { extensions: ['docx'], parse: (path) => parseDocx(path, limits) };
}
