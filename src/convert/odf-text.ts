import { inlineText } from './markdown.js';
import type { Block } from './slides.js';
import { child, elements, isEl, type XEl } from './xml.js';

/** Whether each list style's levels are numbered (`text:list-level-style-number`), by style name and level (1-based). */
export type ListStyles = Map<string, Map<number, boolean>>;

/** The list styles an ODF styles container (office:automatic-styles, office:styles) declares. */
export function readListStyles(containers: readonly (XEl | undefined)[], into: ListStyles = new Map()): ListStyles {
  for (const container of containers) {
    if (container === undefined) continue;
    for (const style of elements(container, 'text:list-style')) {
      const name = style.attrs['style:name'];
      if (name === undefined) continue;
      const levels = new Map<number, boolean>();
      for (const level of elements(style))
        levels.set(Number(level.attrs['text:level'] ?? 1), level.name === 'text:list-level-style-number');
      into.set(name, levels);
    }
  }
  return into;
}

/** Inline elements whose content is not the paragraph's text: notes (written apart), comments, deleted changes, ruby annotations. */
const SKIP_INLINE = new Set(['text:note', 'office:annotation', 'office:annotation-end', 'text:tracked-changes', 'text:ruby-text']);

/** Indexes and tables of contents: generated from the document's own headings, so left out. */
const GENERATED = new Set([
  'text:table-of-content',
  'text:illustration-index',
  'text:table-index',
  'text:object-index',
  'text:user-index',
  'text:alphabetical-index',
  'text:bibliography',
  'text:tracked-changes',
  'text:sequence-decls',
  'office:forms',
]);

/** The walk's state: footnotes found in paragraphs (numbered in reading order) and the list styles. */
export type OdfText = { lists: ListStyles; notes: string[] };

/** A paragraph's (text:p, text:h) text: spans, links and fields walked, text:s/tab/line-break as spaces, footnotes as `[^N]`. */
export function paragraphText(p: XEl, ctx: OdfText): string {
  let out = '';
  const walk = (el: XEl): void => {
    for (const c of el.children) {
      if (!isEl(c)) {
        out += c;
        continue;
      }
      if (c.name === 'text:s') out += ' '.repeat(Math.min(100, Math.max(1, Number(c.attrs['text:c'] ?? 1) || 1)));
      else if (c.name === 'text:tab' || c.name === 'text:line-break') out += ' ';
      else if (c.name === 'text:note') {
        const body = child(c, 'text:note-body');
        const text =
          body === undefined
            ? ''
            : inlineText(
                elements(body)
                  .map((b) => blockText(b, ctx))
                  .join(' '),
              );
        if (text !== '') {
          ctx.notes.push(text);
          out += `[^${ctx.notes.length}]`;
        }
      } else if (!SKIP_INLINE.has(c.name) && c.name !== 'draw:image' && c.name !== 'svg:title' && c.name !== 'svg:desc') walk(c);
    }
  };
  walk(p);
  return out;
}

/** All the text of a block element (a cell's or note's paragraphs, lists, nested tables), as one line. */
function blockText(el: XEl, ctx: OdfText): string {
  if (el.name === 'text:p' || el.name === 'text:h') return paragraphText(el, ctx);
  return elements(el)
    .map((c) => blockText(c, ctx))
    .join(' ');
}

/** A table:table as rows of cell text: repeated columns and rows written out (an empty repeat counts, but only up to a row's last text). */
export function tableRows(table: XEl, ctx: OdfText, budget: { cells: number }): string[][] {
  const rows: string[][] = [];
  const addRow = (row: XEl): void => {
    const cells: string[] = [];
    let at = 0;
    for (const cell of elements(row)) {
      if (cell.name !== 'table:table-cell' && cell.name !== 'table:covered-table-cell') continue;
      const repeat = Math.max(1, Number(cell.attrs['table:number-columns-repeated'] ?? 1) || 1);
      const text = cell.name === 'table:covered-table-cell' ? '' : inlineText(blockText(cell, ctx));
      if (text !== '') {
        spend(budget, repeat);
        for (let i = 0; i < repeat; i++) cells[at + i] = text;
      }
      at += repeat;
    }
    const repeatRows = Math.max(1, Number(row.attrs['table:number-rows-repeated'] ?? 1) || 1);
    const dense = Array.from({ length: cells.length }, (_, i) => cells[i] ?? '');
    if (dense.length === 0) {
      rows.push([]);
      return;
    }
    spend(budget, dense.length * (repeatRows - 1));
    for (let i = 0; i < repeatRows; i++) rows.push(dense);
  };
  const walk = (el: XEl): void => {
    for (const c of elements(el)) {
      if (c.name === 'table:table-row') addRow(c);
      else if (c.name === 'table:table-header-rows' || c.name === 'table:table-rows' || c.name === 'table:table-row-group') walk(c);
    }
  };
  walk(table);
  while (rows.length > 0 && (rows[rows.length - 1] as string[]).length === 0) rows.pop();
  return rows;
}

/** Cells a table may write out (its repeats included) before the conversion stops: the output limit, counted early. */
export function spend(budget: { cells: number }, cells: number): void {
  budget.cells -= cells;
  if (budget.cells < 0) throw new TableBudget();
}

export class TableBudget extends Error {}

/**
 * Text content (office:text, a text box, a section) as blocks: text:h as headings by outline level, the
 * Title paragraph style as a level-1 heading, lists with their levels and numbering, tables as rows.
 */
export function textBlocks(container: XEl, ctx: OdfText, budget: { cells: number }): Block[] {
  const blocks: Block[] = [];
  const list = (el: XEl, depth: number, styleName: string | undefined): void => {
    const style = el.attrs['text:style-name'] ?? styleName;
    const numbered = style === undefined ? false : (ctx.lists.get(style)?.get(Math.min(10, depth + 1)) ?? false);
    for (const item of elements(el)) {
      if (item.name !== 'text:list-item' && item.name !== 'text:list-header') continue;
      const texts: string[] = [];
      const flush = (): void => {
        const text = inlineText(texts.join(' '));
        texts.length = 0;
        if (text !== '') blocks.push({ kind: 'item', depth, text, ...(numbered ? { number: 0 } : {}) });
      };
      for (const c of elements(item)) {
        if (c.name === 'text:h') {
          // A numbered heading (outline numbering written as a list, as Word's documents often are) stays a heading.
          flush();
          blocks.push({ kind: 'heading', level: Number(c.attrs['text:outline-level'] ?? 1) || 1, text: paragraphText(c, ctx) });
        } else if (c.name === 'text:p') texts.push(paragraphText(c, ctx));
        else if (c.name === 'text:list') {
          flush();
          list(c, depth + 1, style);
        } else walk(c);
      }
      flush();
    }
  };
  const walk = (el: XEl): void => {
    if (GENERATED.has(el.name)) return;
    if (el.name === 'text:h') {
      const level = Number(el.attrs['text:outline-level'] ?? 1) || 1;
      blocks.push({ kind: 'heading', level, text: paragraphText(el, ctx) });
    } else if (el.name === 'text:p') {
      const text = paragraphText(el, ctx);
      const style = el.attrs['text:style-name'] ?? '';
      if (style === 'Title') blocks.push({ kind: 'heading', level: 1, text });
      else blocks.push({ kind: 'paragraph', text });
    } else if (el.name === 'text:list') list(el, 0, undefined);
    else if (el.name === 'table:table') blocks.push({ kind: 'table', rows: tableRows(el, ctx, budget) });
    else for (const c of elements(el)) walk(c);
  };
  for (const c of elements(container)) walk(c);
  return blocks;
}
