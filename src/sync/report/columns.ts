import { printable } from '../../shared/printable.js';

/**
 * Plain-text columns for people: left-aligned text, right-aligned numbers, no colours (the CLI adds those).
 * Every cell and field is shown printable (shared/printable.ts): a path with a newline or a tab stays on its line.
 */

export type Align = 'left' | 'right';

/** Lays out rows as aligned columns; the last column is never padded; widths are capped at `maxWidth`. */
export function columns(cells: readonly (readonly string[])[], align: readonly Align[], maxWidth = 48): string[] {
  const rows = cells.map(printableRow);
  const widths: number[] = [];
  for (const row of rows) widen(widths, row, maxWidth);
  return rows.map((row) => layoutRow(row, widths, align));
}

/** Lines per chunk of columnChunks: tens of KB of text, each chunk's strings dying young. */
const LINES_PER_CHUNK = 512;

/**
 * columns() over the cells of many items, as text in chunks of lines (each ending in a newline) to
 * write one after the other: the widths in a first pass, then the lines, never all of them at once.
 */
export function* columnChunks<T>(
  items: readonly T[],
  cellsOf: (item: T) => readonly string[],
  align: readonly Align[],
  maxWidth = 48,
): Generator<string> {
  const widths: number[] = [];
  for (let k = 0; k < items.length; k++) widen(widths, printableRow(cellsOf(items[k] as T)), maxWidth);
  for (let start = 0; start < items.length; start += LINES_PER_CHUNK) {
    const end = Math.min(items.length, start + LINES_PER_CHUNK);
    const lines = new Array<string>(end - start);
    for (let k = start; k < end; k++) lines[k - start] = layoutRow(printableRow(cellsOf(items[k] as T)), widths, align);
    yield `${lines.join('\n')}\n`;
  }
}

/** columnChunks over items made afresh for each of its two passes (`items()`: a new iterator each call), never held as a list. */
export function* columnChunksOf<T>(
  items: () => Iterable<T>,
  cellsOf: (item: T) => readonly string[],
  align: readonly Align[],
  maxWidth = 48,
): Generator<string> {
  const widths: number[] = [];
  for (const item of items()) widen(widths, printableRow(cellsOf(item)), maxWidth);
  let lines: string[] = [];
  for (const item of items()) {
    lines.push(layoutRow(printableRow(cellsOf(item)), widths, align));
    if (lines.length === LINES_PER_CHUNK) {
      yield `${lines.join('\n')}\n`;
      lines = [];
    }
  }
  if (lines.length > 0) yield `${lines.join('\n')}\n`;
}

function widen(widths: number[], row: readonly string[], maxWidth: number): void {
  for (let i = 0; i < row.length; i++) widths[i] = Math.min(maxWidth, Math.max(widths[i] ?? 0, (row[i] as string).length));
}

function layoutRow(row: readonly string[], widths: readonly number[], align: readonly Align[]): string {
  return row
    .map((cell, i) => {
      if (i === row.length - 1) return cell;
      const w = widths[i] ?? 0;
      return align[i] === 'right' ? cell.padStart(w) : cell.padEnd(w);
    })
    .join('  ')
    .trimEnd();
}

/** The row with each cell printable: the row itself when every cell is (no copy per row of a large plan). */
function printableRow(row: readonly string[]): readonly string[] {
  for (let i = 0; i < row.length; i++) if (printable(row[i] as string) !== row[i]) return row.map(printable);
  return row;
}

/** "label:  value" lines with the labels aligned. */
export function fields(pairs: readonly (readonly [string, string])[], indent = '  '): string[] {
  const width = Math.max(0, ...pairs.map(([label]) => label.length + 1));
  return pairs.map(([label, value]) => `${indent}${`${label}:`.padEnd(width)}  ${printable(value)}`);
}

/** The path to show: `source/path` when several sources are in play, else the path. */
export function displayPath(item: { source: string; path: string }, multiSource: boolean): string {
  return multiSource ? `${item.source}/${item.path}` : item.path;
}

/** True when the items, with `alsoSources` (those of the files a plan counted without listing), come from more than one source. */
export function hasSeveralSources(items: readonly { source: string }[], alsoSources: readonly string[] = []): boolean {
  const first = items[0]?.source ?? alsoSources[0];
  // An indexed loop, not some(): no call per item, in code that runs once over up to 100k items.
  for (let i = 1; i < items.length; i++) if ((items[i] as { source: string }).source !== first) return true;
  return alsoSources.some((s) => s !== first);
}
