import { inlineText } from './markdown.js';
import { spend } from './odf-text.js';
import { streamXml } from './xml.js';

export type Sheet = { name: string; rows: string[][] };

/** Elements inside a cell whose text is not the cell's shown value. */
const SKIPPED = new Set(['office:annotation', 'text:note', 'draw:frame', 'draw:g', 'svg:title', 'svg:desc']);

/**
 * Every sheet of an ODS's content.xml, streamed (a spreadsheet's content.xml runs to tens of MB, far
 * more as a tree): each table:table under office:spreadsheet as its rows of cells' shown text (text:p,
 * text:s counted, tabs and line breaks as spaces). Repeated rows and cells with text are written out
 * against `budget`; empty repeats are only counted. Returns the office:body's first child too, so a file
 * of another kind can be named.
 */
export function odsSheets(
  content: Uint8Array,
  part: string,
  maxDepth: number,
  budget: { cells: number },
): { body: string; sheets: Sheet[] } {
  const sheets: Sheet[] = [];
  let body = '';
  let inBody = false;
  let sheet: Sheet | undefined;
  let tableDepth = 0;
  let row: string[] | undefined;
  let rowRepeat = 1;
  let cell: { text: string; repeat: number; covered: boolean } | undefined;
  let at = 0;
  let skipping = 0;
  let paragraphs = 0;
  streamXml(content, part, maxDepth, {
    open(name, attrs) {
      if (name === 'office:body') inBody = true;
      else if (inBody && body === '') body = name;
      if (skipping > 0 || SKIPPED.has(name)) {
        skipping++;
        return;
      }
      if (name === 'table:table') {
        tableDepth++;
        if (tableDepth === 1 && body === 'office:spreadsheet') {
          sheet = { name: attrs['table:name'] ?? `Sheet${sheets.length + 1}`, rows: [] };
          sheets.push(sheet);
        }
      } else if (sheet === undefined || tableDepth !== 1) return;
      else if (name === 'table:table-row') {
        row = [];
        at = 0;
        rowRepeat = Math.max(1, Number(attrs['table:number-rows-repeated'] ?? 1) || 1);
      } else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && row !== undefined) {
        const repeat = Math.max(1, Number(attrs['table:number-columns-repeated'] ?? 1) || 1);
        cell = { text: '', repeat, covered: name === 'table:covered-table-cell' };
        paragraphs = 0;
      } else if (cell !== undefined) {
        if (name === 'text:p' || name === 'text:h') {
          if (paragraphs++ > 0) cell.text += ' ';
        } else if (name === 'text:s') cell.text += ' '.repeat(Math.min(100, Math.max(1, Number(attrs['text:c'] ?? 1) || 1)));
        else if (name === 'text:tab' || name === 'text:line-break') cell.text += ' ';
      }
    },
    close(name) {
      if (skipping > 0) {
        skipping--;
        return;
      }
      if (name === 'table:table') {
        if (tableDepth === 1) sheet = undefined;
        tableDepth--;
      } else if (sheet === undefined || tableDepth !== 1) return;
      else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && cell !== undefined && row !== undefined) {
        const text = cell.covered ? '' : inlineText(cell.text);
        if (text !== '') {
          spend(budget, cell.repeat);
          for (let i = 0; i < cell.repeat; i++) row[at + i] = text;
        }
        at += cell.repeat;
        cell = undefined;
      } else if (name === 'table:table-row' && row !== undefined) {
        const dense = Array.from({ length: row.length }, (_, i) => row?.[i] ?? '');
        if (dense.length > 0) {
          spend(budget, dense.length * rowRepeat);
          for (let i = 0; i < rowRepeat; i++) sheet.rows.push(dense);
        }
        row = undefined;
      }
    },
    text(data) {
      if (skipping === 0 && cell !== undefined && paragraphs > 0) cell.text += data;
    },
  });
  return { body, sheets };
}
