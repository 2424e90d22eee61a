import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse, type Info } from 'csv-parse';
import { isKbsyncError } from '../../../shared/errors.js';
import { MIB } from '../../../shared/plans.js';
import { parseFailed } from '../parse-error.js';
import { readText } from '../read-text.js';
import type { Parser, Section } from '../types.js';
import { withoutLeadingComments, type DroppedLines } from './comment-lines.js';
import { createRecordBatcher } from './records.js';

/** A record longer than this (e.g. a quote never closed) fails the file instead of filling memory. */
export const MAX_RECORD_BYTES = 4 * MIB;

/** Header names made usable: trimmed, an empty one becomes `column N`, a repeated one `name (2)`. */
export function columnNames(header: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return header.map((raw, i) => {
    const name = raw.trim() === '' ? `column ${i + 1}` : raw.trim();
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name} (${n})`;
  });
}

/** A row as `col: value; col: value` (empty fields left out; extra fields named `column N`), or "" when empty. */
export function renderRow(columns: readonly string[], row: readonly string[]): string {
  const parts: string[] = [];
  row.forEach((raw, i) => {
    const value = raw.trim();
    if (value !== '') parts.push(`${columns[i] ?? `column ${i + 1}`}: ${value}`);
  });
  return parts.join('; ');
}

/** The file's text as csv-parse reads it: leading `#` comment lines left out (a commented TSV header kept). */
function tableText(path: string, delimiter: string, lines: DroppedLines): Readable {
  return Readable.from(withoutLeadingComments(readText(path), delimiter, delimiter === '\t', lines));
}

/** `lastRecordLine` and csv-parse's line numbers count from the first line it was handed; `dropped` lines came before. */
function describeCsvError(err: CsvError, lastRecordLine: number, dropped: number): string {
  const csvLine = (err as CsvError & { lines?: number }).lines;
  const line = csvLine === undefined ? undefined : csvLine + dropped;
  lastRecordLine += dropped;
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
    return `line ${lastRecordLine + 1}: a quoted field is never closed (the file ends inside it)`;
  }
  if (err.code === 'CSV_MAX_RECORD_SIZE') {
    return `line ${lastRecordLine + 1}: a record is longer than ${MAX_RECORD_BYTES / MIB} MiB (is a quote left open?)`;
  }
  return `${line === undefined ? '' : `line ${line}: `}${err.message}`;
}

const parseOptions = (delimiter: string) =>
  ({
    delimiter,
    bom: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: MAX_RECORD_BYTES,
  }) as const;

/**
 * The line where the last record before a CSV error ended, found by reading the file again with
 * csv-parse's per-record `info`: that costs a third of the parse, so only a failing file pays it.
 */
async function lastRecordLineBeforeError(path: string, delimiter: string): Promise<number> {
  const parser = parse({ ...parseOptions(delimiter), info: true });
  const feeding = pipeline(tableText(path, delimiter, { dropped: 0 }), parser).catch(() => undefined);
  let lastLine = 0;
  try {
    for await (const { info } of parser as AsyncIterable<{ info: Info }>) lastLine = info.lines;
  } catch {
    // the error being described
  } finally {
    parser.destroy();
    await feeding;
  }
  return lastLine;
}

async function* parseDelimited(path: string, delimiter: string, format: string): AsyncGenerator<Section> {
  const parser = parse(parseOptions(delimiter));
  const lines: DroppedLines = { dropped: 0 };
  const feeding = pipeline(tableText(path, delimiter, lines), parser).catch(() => undefined);
  const batcher = createRecordBatcher();
  let columns: string[] | undefined;
  let failure: unknown;
  // Data rows are numbered from 1, the header row not counted (blank lines are skipped by the parser).
  let dataRow = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (columns === undefined) columns = columnNames(record);
      else {
        dataRow++;
        const row = renderRow(columns, record);
        const section = row === '' ? undefined : batcher.add(row, dataRow);
        if (section) yield section;
      }
    }
  } catch (err) {
    failure = err;
  } finally {
    parser.destroy();
    await feeding;
  }
  if (failure !== undefined) {
    if (isKbsyncError(failure)) throw failure;
    if (failure instanceof CsvError) {
      const lastLine = await lastRecordLineBeforeError(path, delimiter);
      throw parseFailed(
        `invalid ${format}: ${describeCsvError(failure, lastLine, lines.dropped)}; fix the file and upload it again`,
        failure,
      );
    }
    throw failure;
  }
  const last = batcher.end();
  if (last) yield last;
}

/**
 * A delimited-text parser: the first row names the columns (after any leading `#` comment lines);
 * each row is one `col: value; ...` record.
 */
export function delimitedParser(extensions: readonly string[], delimiter: string, format: string): Parser {
  return { extensions, parse: (path) => parseDelimited(path, delimiter, format) };
}
