import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CellObject, WorkBook, WorkSheet } from '@e965/xlsx';
import { isKbsyncError } from '../../../shared/errors.js';
import { parseFailed } from '../parse-error.js';
import type { Section } from '../types.js';
import { renderRow } from './delimited.js';
import { describeWorkbookError, type WorkbookFormat } from './office-messages.js';
import { createRecordBatcher } from './records.js';

/** What SheetJS is asked to read: values and their displayed text only (no formulas, styles, HTML or macros). */
const READ_OPTIONS = {
  type: 'buffer',
  dense: true,
  cellText: true,
  cellDates: false,
  cellFormula: false,
  cellHTML: false,
  cellStyles: false,
  cellNF: false,
  sheetStubs: false,
  bookVBA: false,
  bookFiles: false,
  WTF: false,
} as const;

/** A row longer than this is read through its existing cells only (a sparse row can be 16,384 columns long). */
const SPARSE_ROW_CELLS = 1024;

/** The library's message for an error it threw (SheetJS throws strings as well as Errors). */
function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reads a workbook with SheetJS (loaded on first use); its errors become `parse_failed` saying why.
 * Synchronous work of seconds on a large workbook: the parsers call it in a worker thread (office-thread.ts).
 */
export async function readWorkbook(data: Buffer, format: WorkbookFormat): Promise<WorkBook> {
  const XLSX = await import('@e965/xlsx');
  try {
    return XLSX.read(data, READ_OPTIONS);
  } catch (err) {
    if (isKbsyncError(err)) throw err;
    const message = messageOf(err);
    if (/password-protected|encrypt/i.test(message)) {
      throw parseFailed(
        'the workbook is password-protected (encrypted); remove the password in Excel or LibreOffice and upload it again',
        err,
      );
    }
    throw parseFailed(describeWorkbookError(format, message), err);
  }
}

/** Spreadsheet column letters: 0 → A, 25 → Z, 26 → AA. */
export function columnLetter(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

function cellText(cell: CellObject | undefined): string {
  if (cell === undefined || cell === null) return '';
  if (typeof cell.w === 'string') return cell.w;
  return cell.v === undefined || cell.v === null ? '' : String(cell.v);
}

/** A row's texts by column, holes and all; a very long sparse row is read through its existing cells. */
function rowTexts(row: (CellObject | undefined)[] | undefined): string[] {
  const out: string[] = [];
  if (row === undefined) return out;
  if (row.length <= SPARSE_ROW_CELLS) {
    for (let c = 0; c < row.length; c++) out[c] = cellText(row[c]);
  } else {
    for (const key of Object.keys(row)) out[Number(key)] = cellText(row[Number(key)]);
  }
  for (let c = 0; c < out.length; c++) out[c] ??= '';
  return out;
}

const isBlank = (texts: string[]): boolean => texts.every((t) => t.trim() === '');

/** The header row's cells name the columns: an empty one is named by its letter, a repeated one `name (2)`. */
function headerNames(texts: string[]): string[] {
  const seen = new Map<string, number>();
  return texts.map((raw, i) => {
    const name = raw.trim() === '' ? columnLetter(i) : raw.trim();
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name} (${n})`;
  });
}

/** A header cell longer than this is taken for data (a column of long texts repeats its first one's shape). */
const MAX_HEADER_CHARS = 40;
/** Rows after the first that are looked at to decide whether it is a header. */
const HEADER_SAMPLE_ROWS = 50;

const isTextCell = (cell: CellObject | undefined): boolean => cell === undefined || cellText(cell).trim() === '' || cell.t === 's';

/**
 * True when the first row names the columns: every non-empty cell holds text, and either a column
 * it names holds a number, date or boolean below it, or its names are short and distinct.
 */
function looksLikeHeader(first: (CellObject | undefined)[], sample: (CellObject | undefined)[][]): boolean {
  const names = Object.keys(first)
    .map(Number)
    .filter((c) => cellText(first[c]).trim() !== '');
  if (names.length === 0 || !names.every((c) => isTextCell(first[c]))) return false;
  if (sample.some((row) => names.some((c) => !isTextCell(row[c])))) return true;
  const texts = names.map((c) => cellText(first[c]).trim());
  return texts.every((t) => t.length <= MAX_HEADER_CHARS) && new Set(texts).size === texts.length;
}

function sheetRows(sheet: WorkSheet): (CellObject | undefined)[][] {
  const data = (sheet as { '!data'?: (CellObject | undefined)[][] })['!data'];
  return data ?? [];
}

/**
 * One sheet as record sections headed by its name. When the first non-empty row looks like a
 * header (looksLikeHeader) and more rows follow, it names the columns (and is one `columns: a, b`
 * record); otherwise the columns are named by letter (A, B, ...). Each row is one `column: value; ...` record (empty cells left
 * out), as CSV rows are.
 */
async function* sheetSections(name: string, sheet: WorkSheet): AsyncGenerator<Section> {
  const rows = sheetRows(sheet);
  const indices = Object.keys(rows).map(Number);
  const first = indices.find((r) => !isBlank(rowTexts(rows[r])));
  if (first === undefined) return;
  const sample = indices
    .filter((r) => r > first)
    .slice(0, HEADER_SAMPLE_ROWS)
    .map((r) => rows[r] ?? [])
    .filter((row) => !isBlank(rowTexts(row)));
  const firstRow = rows[first] ?? [];
  const header = sample.length > 0 && looksLikeHeader(firstRow, sample) ? headerNames(rowTexts(firstRow)) : undefined;
  const columns = (i: number): string => header?.[i] ?? columnLetter(i);
  const batcher = createRecordBatcher();
  // The header's names, once: a column with no value in any row is still found by its name.
  if (header !== undefined) batcher.add(`columns: ${header.join(', ')}`);
  let sinceTurn = 0;
  for (const r of indices) {
    if (header !== undefined && r === first) continue;
    const texts = rowTexts(rows[r]);
    const record = renderRow(
      texts.map((_, i) => columns(i)),
      texts,
    );
    // The sheet's own row number (1-based, as Excel shows it).
    const section = record === '' ? undefined : batcher.add(record, r + 1);
    if (section) {
      yield { ...section, heading: name };
      // SheetJS has already read the sheet; rendering a large one still gives other work a turn.
      if (++sinceTurn % 16 === 0) await nextTurn();
    }
  }
  const last = batcher.end();
  if (last) yield { ...last, heading: name };
}

/**
 * A workbook's sections: every sheet (hidden ones too), in order, each headed by its name. A
 * workbook of several sheets starts with one record listing their names, so that an empty sheet's
 * name is found too.
 */
export async function* workbookSections(workbook: WorkBook): AsyncGenerator<Section> {
  if (workbook.SheetNames.length > 1) yield { records: [`sheets: ${workbook.SheetNames.join(', ')}`] };
  for (const name of workbook.SheetNames) {
    const sheet = workbook.Sheets[name];
    if (sheet !== undefined) yield* sheetSections(name, sheet);
  }
}
