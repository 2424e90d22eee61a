import { tableRows, type OdfText } from './odf-text.js';
import { elements, type XEl } from './xml.js';

export type Sheet = { name: string; rows: string[][] };

/** Every sheet (table:table) of office:spreadsheet, in order, with its rows of cell text. */
export function odsSheets(body: XEl, ctx: OdfText, budget: { cells: number }): Sheet[] {
  return elements(body, 'table:table').map((table, i) => ({
    name: table.attrs['table:name'] ?? `Sheet${i + 1}`,
    rows: tableRows(table, ctx, budget),
  }));
}
