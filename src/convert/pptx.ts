import { chartBlocks } from './chart.js';
import { failed, guarded } from './failure.js';
import { inlineText, MarkdownWriter } from './markdown.js';
import { mainPart, readRels, readXmlPart } from './ooxml.js';
import { numberItems, writeSlides, type Block, type Slide } from './slides.js';
import type { Converter, ConvertResult } from './types.js';
import { child, elements, find, findAll, parseXml, textOf, type XEl } from './xml.js';
import { openZip, type ZipParts } from './zip.js';

/** The parts a PPTX is read from: XML and relationships, never media or embedded files. */
const OOXML_PART = (name: string): boolean => /\.(xml|rels)$/i.test(name);

/** Placeholders that repeat on every slide (date, footer, slide number, header): not the slide's content. */
const CHROME = new Set(['dt', 'ftr', 'sldNum', 'hdr', 'sldImg']);
const TITLES = new Set(['title', 'ctrTitle']);
/** Placeholders whose paragraphs are bullets unless they say otherwise (no type means a body/content placeholder). */
const BULLETED = new Set(['body', 'obj', '']);

const placeholderType = (sp: XEl): string | undefined => {
  const ph = find(child(sp, 'p:nvSpPr') ?? sp, 'p:ph');
  return ph === undefined ? undefined : (ph.attrs.type ?? '');
};

/** A DrawingML paragraph's text: runs, fields and line breaks (as spaces). */
function paragraphText(p: XEl): string {
  let out = '';
  for (const c of elements(p)) {
    if (c.name === 'a:r' || c.name === 'a:fld') out += textOf(child(c, 'a:t') ?? c);
    else if (c.name === 'a:br') out += ' ';
  }
  return out;
}

/** A text body's paragraphs as blocks: list items where bullets are on (by the shape's kind or the paragraph), paragraphs otherwise. */
function textBlocks(txBody: XEl, bulleted: boolean): Block[] {
  const blocks: Block[] = [];
  for (const p of elements(txBody, 'a:p')) {
    const text = inlineText(paragraphText(p));
    if (text === '') continue;
    const pPr = child(p, 'a:pPr');
    const depth = Math.min(8, Number(pPr?.attrs.lvl ?? 0) || 0);
    const none = pPr !== undefined && child(pPr, 'a:buNone') !== undefined;
    const numbered = pPr !== undefined && child(pPr, 'a:buAutoNum') !== undefined;
    const explicit = numbered || (pPr !== undefined && child(pPr, 'a:buChar') !== undefined);
    if (!none && (bulleted || explicit)) blocks.push({ kind: 'item', depth, text, ...(numbered ? { number: 0 } : {}) });
    else blocks.push({ kind: 'paragraph', text });
  }
  return blocks;
}

/** A DrawingML table's rows of cell text; cells a merge covers are left empty. */
function tableRows(tbl: XEl): string[][] {
  return elements(tbl, 'a:tr').map((tr) =>
    elements(tr, 'a:tc').map((tc) => {
      if (tc.attrs.hMerge === '1' || tc.attrs.vMerge === '1') return '';
      const body = child(tc, 'a:txBody');
      return body === undefined ? '' : elements(body, 'a:p').map(paragraphText).join(' ');
    }),
  );
}

/** A slide's title and blocks, and where each chart or SmartArt diagram (by relationship id) goes among the blocks. */
type SlideContent = { title: string; blocks: Block[]; parts: { at: number; rid: string; kind: 'chart' | 'diagram' }[] };

/** A SmartArt diagram's data part (dgm:dataModel) as list items: its nodes' text, in the model's order (connectors have none). */
function diagramBlocks(data: XEl): Block[] {
  const blocks: Block[] = [];
  for (const pt of findAll(data, 'dgm:pt')) {
    const type = pt.attrs.type ?? 'node';
    const t = child(pt, 'dgm:t');
    if ((type !== 'node' && type !== 'asst') || t === undefined) continue;
    const text = inlineText(elements(t, 'a:p').map(paragraphText).join(' '));
    if (text !== '') blocks.push({ kind: 'item', depth: 0, text });
  }
  return blocks;
}

/** A shape tree's title and blocks, in the order its shapes are drawn (groups and alternate content walked into). */
function shapeTree(tree: XEl, into: SlideContent): void {
  for (const el of elements(tree)) {
    if (el.name === 'p:sp') {
      const type = placeholderType(el);
      const body = child(el, 'p:txBody');
      if (body === undefined || (type !== undefined && CHROME.has(type))) continue;
      if (type !== undefined && TITLES.has(type) && into.title === '') {
        into.title = elements(body, 'a:p').map(paragraphText).join(' ');
        continue;
      }
      into.blocks.push(...textBlocks(body, type !== undefined && BULLETED.has(type)));
    } else if (el.name === 'p:graphicFrame') {
      for (const tbl of findAll(el, 'a:tbl')) into.blocks.push({ kind: 'table', rows: tableRows(tbl) });
      const chart = find(el, 'c:chart');
      if (chart?.attrs['r:id'] !== undefined) into.parts.push({ at: into.blocks.length, rid: chart.attrs['r:id'], kind: 'chart' });
      const diagram = find(el, 'dgm:relIds');
      if (diagram?.attrs['r:dm'] !== undefined) into.parts.push({ at: into.blocks.length, rid: diagram.attrs['r:dm'], kind: 'diagram' });
    } else if (el.name === 'p:grpSp') {
      shapeTree(el, into);
    } else if (el.name === 'mc:AlternateContent') {
      const choice = child(el, 'mc:Choice') ?? child(el, 'mc:Fallback');
      if (choice !== undefined) shapeTree(choice, into);
    }
  }
}

/** The notes slide's text: its body placeholder's paragraphs (not the slide image or the number). */
function notesText(notes: XEl): string[] {
  const out: string[] = [];
  const tree = find(notes, 'p:spTree');
  if (tree === undefined) return out;
  for (const sp of findAll(tree, 'p:sp')) {
    const type = placeholderType(sp);
    if (type !== 'body') continue;
    const body = child(sp, 'p:txBody');
    if (body !== undefined) out.push(...elements(body, 'a:p').map(paragraphText));
  }
  return out;
}

/** The document title from docProps/core.xml (dc:title), if any. */
async function coreTitle(zip: ZipParts, maxDepth: number): Promise<string> {
  const text = await zip.text('docProps/core.xml');
  if (text === undefined) return '';
  const title = find(parseXml(text, 'the document properties (docProps/core.xml)', maxDepth), 'dc:title');
  return title === undefined ? '' : inlineText(textOf(title));
}

async function readSlides(zip: ZipParts, maxDepth: number): Promise<Slide[]> {
  const main = await mainPart(zip, 'ppt/presentation.xml', maxDepth);
  if (!zip.has(main)) throw failed(`the PPTX has no presentation part (${main}): the file is not a PPTX`);
  const presentation = await readXmlPart(zip, main, 'the presentation part', maxDepth);
  const root = elements(presentation)[0]?.name ?? '';
  if (!/(^|:)presentation$/.test(root))
    throw failed(`the package's main part is ${main} (<${root}>), not a presentation: the file is not a PPTX`);
  const rels = await readRels(zip, main, maxDepth);
  const list = find(presentation, 'p:sldIdLst');
  const slides: Slide[] = [];
  for (const id of list === undefined ? [] : elements(list, 'p:sldId')) {
    const rel = rels.get(id.attrs['r:id'] ?? '');
    const n = slides.length + 1;
    if (rel === undefined || rel.external) throw failed(`slide ${n} is listed in ${main} but its relationship is missing`);
    const xml = await readXmlPart(zip, rel.target, `slide ${n}'s XML`, maxDepth);
    const content: SlideContent = { title: '', blocks: [], parts: [] };
    const tree = find(xml, 'p:spTree');
    if (tree !== undefined) shapeTree(tree, content);
    const slideRels = await readRels(zip, rel.target, maxDepth);
    for (const { at, rid, kind } of [...content.parts].reverse()) {
      const partRel = slideRels.get(rid);
      if (partRel === undefined || partRel.external || !zip.has(partRel.target)) continue;
      const part = await readXmlPart(zip, partRel.target, `slide ${n}'s ${kind}`, maxDepth);
      content.blocks.splice(at, 0, ...(kind === 'chart' ? chartBlocks(part) : diagramBlocks(part)));
    }
    let notes: string[] = [];
    for (const r of slideRels.values()) {
      if (r.type !== 'notesSlide' || r.external || !zip.has(r.target)) continue;
      notes = notesText(await readXmlPart(zip, r.target, `slide ${n}'s notes`, maxDepth));
    }
    slides.push({ title: content.title, blocks: numberItems(content.blocks), notes });
  }
  return slides;
}

/** PPTX: slides in presentation order, each with its title, bullet levels, tables, charts' data and speaker notes. */
export const convertPptx: Converter = (bytes, { limits }) =>
  guarded('PPTX', bytes, async (): Promise<ConvertResult> => {
    const zip = await openZip(bytes, 'PPTX', limits, OOXML_PART);
    try {
      const slides = await readSlides(zip, limits.maxDepth);
      const md = new MarkdownWriter(limits.maxOutputChars, 'PPTX');
      const title = await coreTitle(zip, limits.maxDepth);
      if (title !== '') md.heading(1, title);
      writeSlides(md, slides);
      if (slides.every((s) => s.title.trim() === '' && s.blocks.length === 0 && s.notes.length === 0)) {
        return { ok: false, skip: 'no-text', reason: `the PPTX holds no text on its ${slides.length} slides` };
      }
      return { ok: true, markdown: md.toString(), units: slides.length };
    } finally {
      zip.close();
    }
  });
