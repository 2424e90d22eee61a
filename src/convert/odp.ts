import { inlineText } from './markdown.js';
import { paragraphText, tableRows, textBlocks, type OdfText } from './odf-text.js';
import { numberItems, type Block, type Slide } from './slides.js';
import { child, elements, findAll, type XEl } from './xml.js';

/** Frames that repeat on every slide (date, footer, number, header) or show a picture of it: not the slide's content. */
const CHROME = new Set(['date-time', 'footer', 'page-number', 'header', 'page', 'handout']);
/** Frames whose paragraphs are bullets even outside a text:list. */
const OUTLINE = 'outline';

/** A drawing's shapes in order: frames (text boxes, tables), custom shapes and groups. */
function shapes(page: XEl, ctx: OdfText, budget: { cells: number }, into: { title: string; blocks: Block[] }): void {
  for (const el of elements(page)) {
    const cls = el.attrs['presentation:class'] ?? '';
    if (CHROME.has(cls) || el.name === 'presentation:notes') continue;
    if (el.name === 'draw:g') {
      shapes(el, ctx, budget, into);
      continue;
    }
    if (el.name !== 'draw:frame' && el.name !== 'draw:custom-shape' && el.name !== 'draw:rect' && el.name !== 'draw:text-box') continue;
    const box = el.name === 'draw:frame' ? child(el, 'draw:text-box') : el;
    if (cls === 'title' && into.title === '' && box !== undefined) {
      into.title = inlineText(
        findAll(box, 'text:p')
          .map((p) => paragraphText(p, ctx))
          .join(' '),
      );
      continue;
    }
    if (box !== undefined) {
      const blocks = textBlocks(box, ctx, budget);
      into.blocks.push(
        ...(cls === OUTLINE ? blocks.map((b): Block => (b.kind === 'paragraph' ? { kind: 'item', depth: 0, text: b.text } : b)) : blocks),
      );
    }
    const table = el.name === 'draw:frame' ? child(el, 'table:table') : undefined;
    if (table !== undefined) into.blocks.push({ kind: 'table', rows: tableRows(table, ctx, budget) });
  }
}

/** Every draw:page of office:presentation, in order, with its notes (presentation:notes' notes frame). */
export function odpSlides(body: XEl, ctx: OdfText, budget: { cells: number }): Slide[] {
  return elements(body, 'draw:page').map((page) => {
    const into = { title: '', blocks: [] as Block[] };
    shapes(page, ctx, budget, into);
    const notes: string[] = [];
    const notesEl = child(page, 'presentation:notes');
    for (const frame of notesEl === undefined ? [] : elements(notesEl, 'draw:frame')) {
      if (frame.attrs['presentation:class'] !== 'notes') continue;
      for (const p of findAll(frame, 'text:p')) notes.push(paragraphText(p, ctx));
    }
    return { title: into.title, blocks: numberItems(into.blocks), notes };
  });
}
