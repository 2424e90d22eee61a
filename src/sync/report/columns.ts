/** Plain-text columns for people: left-aligned text, right-aligned numbers, no colours (the CLI adds those). */

export type Align = 'left' | 'right';

/** Lays out rows as aligned columns; the last column is never padded; widths are capped at `maxWidth`. */
export function columns(rows: readonly (readonly string[])[], align: readonly Align[], maxWidth = 48): string[] {
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

/** "label:  value" lines with the labels aligned. */
export function fields(pairs: readonly (readonly [string, string])[], indent = '  '): string[] {
  const width = Math.max(0, ...pairs.map(([label]) => label.length + 1));
  return pairs.map(([label, value]) => `${indent}${`${label}:`.padEnd(width)}  ${value}`);
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
