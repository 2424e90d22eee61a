import { readDoc, type DocParagraph } from './doc-reader.js';
import { ConvertFailure, encrypted, failed, guarded } from './failure.js';
import { inlineText, MarkdownWriter } from './markdown.js';
import { numberItems, writeBlocks, type Block } from './slides.js';
import type { Converter, ConvertResult } from './types.js';
import { isCfb } from './zip.js';

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
/** Stream names as the OLE2 directory holds them (UTF-16LE); writers differ in the name's case. */
const WORD_DOCUMENT = ['WordDocument', 'worddocument', 'WORDDOCUMENT'].map((n) => Buffer.from(n, 'utf16le'));
const ENCRYPTED_PACKAGE = Buffer.from('EncryptedPackage', 'utf16le');

/** What a file that is not OLE2 is, when its first bytes tell (documents saved "as .doc" by other programs). */
function notOle2(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 512)).toString('latin1').trimStart();
  if (head.startsWith('{\\rtf')) return 'the file is an RTF document named .doc: give it the .rtf extension';
  if (/^<\?xml[^>]*>\s*<\?mso-application progid="Word\.Document"/.test(head)) {
    return 'the file is a Word 2003 XML document named .doc: save it as DOCX, or give it the .xml extension';
  }
  if (/^<(!doctype html|html)/i.test(head)) return 'the file is an HTML page named .doc: give it the .html extension';
  return 'the file is not an OLE2 (Word 97-2003) document: it is damaged, or not a DOC';
}

/** Body paragraphs as blocks: headings by style, list items by level, runs of cells and rows as one table. */
function bodyBlocks(body: readonly DocParagraph[], note: (text: string) => string): Block[] {
  const blocks: Block[] = [];
  let rows: string[][] = [];
  let row: string[] = [];
  let cell: string[] = [];
  const flushTable = (): void => {
    if (rows.length > 0) blocks.push({ kind: 'table', rows });
    rows = [];
  };
  for (const p of body) {
    const text = inlineText(note(p.text));
    if (p.end === 'cell') {
      cell.push(text);
      row.push(cell.join(' '));
      cell = [];
      continue;
    }
    if (p.end === 'row') {
      rows.push(row);
      row = [];
      continue;
    }
    if (row.length > 0 || cell.length > 0) {
      // A paragraph inside a cell that has not ended yet (a cell of several paragraphs).
      cell.push(text);
      continue;
    }
    flushTable();
    if (text === '') continue;
    if (p.heading > 0) blocks.push({ kind: 'heading', level: p.heading, text });
    else if (p.listLevel >= 0) blocks.push({ kind: 'item', depth: p.listLevel, text, ...(p.numbered ? { number: 0 } : {}) });
    else blocks.push({ kind: 'paragraph', text });
  }
  if (row.length > 0) rows.push(row);
  flushTable();
  return numberItems(blocks);
}

/**
 * DOC (Word 97-2003) through word-extractor: paragraphs, headings where the paragraph's style is a
 * built-in Heading 1-9, list items with their levels (numbered where the list level's format is a number), tables,
 * text boxes after the body, then footnotes and endnotes. Headers, footers and comments are left out.
 */
export const convertDoc: Converter = (bytes, { limits }) =>
  guarded('DOC', bytes, async (): Promise<ConvertResult> => {
    if (ZIP_MAGIC.every((b, i) => bytes[i] === b)) {
      throw failed('the file is a zip package (a DOCX or another Office Open XML or ODF file), not a DOC: give it its own extension');
    }
    if (!isCfb(bytes)) throw failed(notOle2(bytes));
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (buffer.includes(ENCRYPTED_PACKAGE)) {
      throw encrypted(
        'the file is a password-protected Office Open XML file (an encrypted DOCX?) named .doc; remove the password and save it again',
      );
    }
    if (!WORD_DOCUMENT.some((name) => buffer.includes(name)))
      throw failed('the OLE2 file has no WordDocument stream: it is truncated, or not a DOC (an XLS or PPT renamed?)');
    let doc;
    try {
      doc = await readDoc(buffer);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/magic number: a5dc/i.test(message)) {
        throw failed('the file is a Word 6.0/95 document, which is not read: save it as Word 97-2003 (.doc) or DOCX');
      }
      if (/magic number/i.test(message)) throw failed("the OLE2 file's WordDocument stream is not a Word document: the file is not a DOC");
      if (err instanceof ConvertFailure) throw err;
      // word-extractor reads offsets as the file gives them: a damaged file fails inside it, with whatever error that makes.
      throw failed(`the DOC file's structure is damaged (${message}): the file is truncated or corrupt`);
    }
    const md = new MarkdownWriter(limits.maxOutputChars, 'DOC');
    const anchored = doc.endnotes.length === 0 && doc.footnotes.length > 0 && doc.footnoteRefs === doc.footnotes.length;
    let n = 0;
    writeBlocks(
      md,
      bodyBlocks(doc.body, (text) => (anchored ? text.replace(/\ue000/g, () => `[^${++n}]`) : text.replace(/\ue000/g, ''))),
    );
    for (const t of doc.textboxes) md.paragraph(t);
    doc.footnotes.forEach((f, i) => (anchored ? md.raw(`[^${i + 1}]: ${inlineText(f)}`) : md.paragraph(`Footnote ${i + 1}: ${f}`)));
    doc.endnotes.forEach((f, i) => md.paragraph(`Endnote ${i + 1}: ${f}`));
    if (md.empty) return { ok: false, skip: 'no-text', reason: 'the DOC holds no text' };
    return { ok: true, markdown: md.toString(), units: 1 };
  });
