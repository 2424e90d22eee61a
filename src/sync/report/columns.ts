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
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.min(maxWidth, Math.max(widths[i] ?? 0, cell.length));
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => {
        if (i === row.length - 1) return cell;
        const w = widths[i] ?? 0;
        return align[i] === 'right' ? cell.padStart(w) : cell.padEnd(w);
      })
      .join('  ')
      .trimEnd(),
  );
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

/** True when the items come from more than one source. */
export function hasSeveralSources(items: readonly { source: string }[]): boolean {
  const first = items[0]?.source;
  // An indexed loop, not some(): no call per item, in code that runs once over up to 100k items.
  for (let i = 1; i < items.length; i++) if ((items[i] as { source: string }).source !== first) return true;
  return false;
}
