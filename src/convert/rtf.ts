import { failed, guarded } from './failure.js';
import { inlineText, MarkdownWriter } from './markdown.js';
import { readRtf, type RtfDocument, type RtfParagraph } from './rtf-reader.js';
import { numberItems, writeBlocks, type Block } from './slides.js';
import type { Converter, ConvertResult } from './types.js';

/** The heading level a paragraph's style or outline level gives it (style "heading N", the style's or the paragraph's \outlinelevel, "Title"), or 0. */
function headingLevel(doc: RtfDocument, p: RtfParagraph): number {
  const name = (doc.styles.get(p.style) ?? '').replace(/\s+/g, ' ').trim();
  const named = /^heading ([1-9])$/i.exec(name);
  if (named !== null) return Number(named[1]);
  if (/^title$/i.test(name)) return 1;
  const outline = p.outline < 9 ? p.outline : (doc.styleOutline.get(p.style) ?? 9);
  return outline < 9 ? outline + 1 : 0;
}

/** Paragraphs as blocks: headings, list items, paragraphs; cells and rows gathered into tables. */
function blocksOf(doc: RtfDocument): Block[] {
  const blocks: Block[] = [];
  let rows: string[][] = [];
  let row: string[] = [];
  let cell: string[] = [];
  const flushTable = (): void => {
    if (row.length > 0) rows.push(row);
    if (rows.length > 0) blocks.push({ kind: 'table', rows });
    rows = [];
    row = [];
    cell = [];
  };
  for (const p of doc.paragraphs) {
    const text = inlineText(p.text);
    if (p.end === 'row') {
      if (cell.length > 0) row.push(cell.join(' '));
      rows.push(row);
      row = [];
      cell = [];
      continue;
    }
    if (p.end === 'cell') {
      cell.push(text);
      row.push(inlineText(cell.join(' ')));
      cell = [];
      continue;
    }
    if (p.intbl) {
      cell.push(text);
      continue;
    }
    flushTable();
    if (text === '') continue;
    const level = headingLevel(doc, p);
    if (level > 0) blocks.push({ kind: 'heading', level, text });
    else if (p.list !== 'none') blocks.push({ kind: 'item', depth: p.level, text, ...(p.list === 'number' ? { number: 0 } : {}) });
    else blocks.push({ kind: 'paragraph', text });
  }
  flushTable();
  return numberItems(blocks);
}

/**
 * RTF: paragraphs, headings where the paragraph's style is named "heading N" (or has an outline level),
 * lists with their levels, tables (\trowd ... \cell ... \row) as pipe tables, footnotes after the body.
 * Text is decoded through the declared code pages (\ansicpg, \fcharset, \'hh, \uN with \ucN).
 */
export const convertRtf: Converter = (bytes, { limits }) =>
  guarded('RTF', bytes, async (): Promise<ConvertResult> => {
    const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 16)).toString('latin1');
    if (!/^\s*\{\\rtf/.test(head)) throw failed('the file does not start with {\\rtf: it is not an RTF');
    const doc = readRtf(bytes, limits.maxDepth);
    const md = new MarkdownWriter(limits.maxOutputChars, 'RTF');
    const blocks = blocksOf(doc);
    const title = inlineText(doc.title);
    const first = blocks[0];
    if (title !== '' && !(first?.kind === 'heading' && inlineText(first.text) === title)) md.heading(1, title);
    writeBlocks(md, blocks);
    doc.notes.forEach((note, i) => md.raw(`[^${i + 1}]: ${inlineText(note)}`));
    if (md.empty) return { ok: false, skip: 'no-text', reason: 'the RTF holds no text' };
    return { ok: true, markdown: md.toString(), units: 1 };
  });
