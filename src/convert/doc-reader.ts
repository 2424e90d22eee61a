import { deletedRanges, readListNumbering, readPapx, readStyleIds, STI_TITLE, type Papx } from './doc-tables.js';
import { encrypted } from './failure.js';

/** What one paragraph of a Word 97-2003 document says of itself (from its PAPX and the style sheet). */
export type DocParagraph = {
  text: string;
  /** 1-9 for a paragraph in a built-in Heading style (or with a direct outline level), 1 for the Title style, else 0. */
  heading: number;
  /** List level (0-based) for a paragraph in a list, else -1. */
  listLevel: number;
  /** Whether that list level writes numbers (else bullets). */
  numbered: boolean;
  /** How the paragraph ends: a paragraph mark, a table cell's end, a table row's end. */
  end: 'paragraph' | 'cell' | 'row';
};

export type DocText = { body: DocParagraph[]; footnotes: string[]; endnotes: string[]; textboxes: string[]; footnoteRefs: number };

/**
 * Reads a Word 97-2003 file with word-extractor (its OLE reader, piece table, deletions and field
 * handling), adding what it reads but does not keep: each paragraph's style (headings), list level and
 * table cell/row ends. An encrypted file (the FIB's fEncrypted bit) is refused before its text is read.
 */
/**
 * The text with each field's instruction (0x13 ... 0x14) and marks blanked (NUL, which clean() drops),
 * keeping its result (0x14 ... 0x15); a table of contents' result goes too (it is generated from the
 * headings). Lengths are kept, so positions still map to the piece table. Done before the text is split
 * into paragraphs, since a field's result may run over many (word-extractor's clean() works within one).
 */
export function hideFields(text: string): string {
  const out = text.split('');
  const stack: { inResult: boolean; hidden: boolean; code: string }[] = [];
  // How many open fields hide what follows (in their instruction, or a TOC's result): kept as a count, not searched.
  let hiding = 0;
  for (let i = 0; i < out.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x13) {
      stack.push({ inResult: false, hidden: false, code: '' });
      hiding++;
      out[i] = '\u0000';
    } else if (c === 0x14 && top !== undefined && !top.inResult) {
      top.inResult = true;
      top.hidden = /^\s*TOC\b/i.test(top.code);
      if (!top.hidden) hiding--;
      out[i] = '\u0000';
    } else if (c === 0x15 && top !== undefined) {
      stack.pop();
      if (!top.inResult || top.hidden) hiding--;
      out[i] = '\u0000';
    } else if (hiding > 0) {
      if (top !== undefined && !top.inResult && top.code.length < 64) top.code += text[i];
      out[i] = '\u0000';
    }
  }
  return out.join('');
}

/** The part of word-extractor's OLE document that names its streams. */
type OleDocument = { _rootStorage?: { _dirEntry?: { streams?: Record<string, unknown> } } };

export async function readDoc(bytes: Buffer): Promise<DocText> {
  const { default: WordOleExtractor } = await import('word-extractor/lib/word-ole-extractor.js');
  const { default: BufferReader } = await import('word-extractor/lib/buffer-reader.js');
  const filters = await import('word-extractor/lib/filters.js');
  // word-extractor's clean() writes "undefined" for an optional hyphen (0x1F), which it has no replacement for: drop it first.
  const clean = (text: string): string => filters.clean(text.replace(/\u001f/g, ''));
  let papx: Papx[] = [];
  let dataStream: Buffer | undefined;
  let styles: number[] = [];
  let numbering: (ilfo: number, ilvl: number) => boolean = () => false;
  class Extractor extends WordOleExtractor {
    override extractWordDocument(document: unknown, buffer: Buffer): Promise<unknown> {
      if (buffer.length >= 0x0c && (buffer.readUInt16LE(0x0a) & 0x0100) !== 0) {
        return Promise.reject(encrypted('the DOC file is password-protected (encrypted); remove the password and save it again'));
      }
      const streams = Object.keys((document as OleDocument)._rootStorage?._dirEntry?.streams ?? {});
      if (!streams.some((k) => k.toLowerCase() === 'data')) return super.extractWordDocument(document, buffer);
      return this.documentStream(document, 'Data')
        .then((stream) => this.streamBuffer(stream))
        .then((data) => {
          dataStream = data;
          return super.extractWordDocument(document, buffer);
        });
    }
    override documentStream(document: unknown, name: string): Promise<NodeJS.ReadableStream> {
      // word-extractor looks streams up by exact name; some writers store "worddocument" or "WORDDOCUMENT".
      const streams = (document as OleDocument)._rootStorage?._dirEntry?.streams ?? {};
      const found = name in streams ? name : (Object.keys(streams).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name);
      return super.documentStream(document, found);
    }
    override writeCharacterProperties(buffer: Buffer, tableBuffer: Buffer): void {
      // Instead of word-extractor's own pass, which deletes text whose properties it misreads.
      for (const [from, to] of deletedRanges(buffer, tableBuffer)) {
        for (const p of this._pieces) {
          const start = Math.max(from, p.startFilePos);
          const end = Math.min(to, p.startFilePos + p.length * p.bpc);
          if (start >= end) continue;
          const a = (start - p.startFilePos) / p.bpc;
          const b = (end - p.startFilePos) / p.bpc;
          p.text = p.text.slice(0, a) + '\u0000'.repeat(b - a) + p.text.slice(b);
        }
      }
    }
    override writeParagraphProperties(buffer: Buffer, tableBuffer: Buffer): void {
      super.writeParagraphProperties(buffer, tableBuffer);
      papx = readPapx(buffer, tableBuffer, dataStream);
      styles = readStyleIds(buffer, tableBuffer);
      try {
        numbering = readListNumbering(buffer, tableBuffer);
      } catch {
        // A damaged list table: its items are written as bullets.
      }
    }
  }
  const extractor = new Extractor();
  const reader = new BufferReader(bytes);
  await reader.open();
  await extractor.extract(reader);
  const pieces = extractor._pieces;
  const b = extractor._boundaries;

  const range = (start: number, end: number): string => {
    let out = '';
    for (const p of pieces) {
      if (p.endCp <= start || p.startCp >= end) continue;
      out += p.text.slice(Math.max(0, start - p.startCp), Math.min(p.length, end - p.startCp));
    }
    return out;
  };
  // The pieces are in character order (word-extractor lays them end to end): found by binary search.
  const fcOf = (cp: number): number => {
    let lo = 0;
    let hi = pieces.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const p = pieces[mid] as (typeof pieces)[number];
      if (cp < p.startCp) hi = mid - 1;
      else if (cp >= p.endCp) lo = mid + 1;
      else return p.startFilePos + (cp - p.startCp) * p.bpc;
    }
    return -1;
  };
  const papxAt = (fc: number): Papx | undefined => {
    let lo = 0;
    let hi = papx.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const p = papx[mid] as Papx;
      if (fc < p.fc) hi = mid - 1;
      else if (fc >= p.fcNext) lo = mid + 1;
      else return p;
    }
    return undefined;
  };

  // Paragraphs of the main text: split at paragraph marks (\r), cell ends (\x07) and row ends (the
  // row-end mark, which word-extractor has already turned into \n).
  const text = hideFields(range(0, b.ccpText));
  const body: DocParagraph[] = [];
  let start = 0;
  let footnoteRefs = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x0d && c !== 0x07 && c !== 0x0a && c !== 0x0c) continue;
    const p = papxAt(fcOf(i));
    // word-extractor turns a row end into \n only when its FKP says so; a wide row's says so in the Data stream.
    const end = c === 0x0a || (c === 0x07 && p?.ttp === true) ? 'row' : c === 0x07 ? 'cell' : 'paragraph';
    const sti = p === undefined ? -1 : (styles[p.istd] ?? -1);
    const heading = sti >= 1 && sti <= 9 ? sti : sti === STI_TITLE ? 1 : p !== undefined && p.outline < 9 ? p.outline + 1 : 0;
    const raw = text.slice(start, i);
    footnoteRefs += raw.split('\u0002').length - 1;
    body.push({
      text: clean(raw.replace(/\u0002/g, '\ue000')),
      heading,
      listLevel: p !== undefined && p.ilfo > 0 ? Math.min(8, p.ilvl) : -1,
      numbered: p !== undefined && p.ilfo > 0 && numbering(p.ilfo, p.ilvl),
      end,
    });
    start = i + 1;
  }
  if (start < text.length) body.push({ text: clean(text.slice(start)), heading: 0, listLevel: -1, numbered: false, end: 'paragraph' });
  const notes = (from: number, length: number): string[] =>
    length <= 0
      ? []
      : range(from, from + length)
          .split('\u0002')
          .slice(1)
          .map((n) => clean(n).replace(/\s+/g, ' ').trim())
          .filter((n) => n !== '');
  const footnotes = notes(b.ccpText, b.ccpFtn);
  const endnotes = notes(b.ccpText + b.ccpFtn + b.ccpHdd + b.ccpAtn, b.ccpEdn);
  const txbxStart = b.ccpText + b.ccpFtn + b.ccpHdd + b.ccpAtn + b.ccpEdn;
  const textboxes = b.ccpTxbx > 0 ? clean(range(txbxStart, txbxStart + b.ccpTxbx)).split('\n') : [];
  return { body, footnotes, endnotes, textboxes, footnoteRefs };
}
