import type { Line, Segment } from './pdf-layout.js';

/**
 * Tables found from the layout: three or more rows in a run, each with two or more segments, whose
 * segments fall into columns separated by gaps that no row crosses. A cell that wraps gives a line
 * with fewer segments set closer to its row than the rows are to each other: its text joins the
 * cell above. Ruled lines and cell borders are drawings, which pdf.js does not give as text.
 */

export type Table = { kind: 'table'; rows: string[][]; lines: Line[] };

/** A list's marker alone: a run whose first cells are all markers is a list with wide labels, not a table. */
export const MARKER_ONLY = /^([•◦▪▫●○■□‣⁃∙·*–—-]|[\uf0a7\uf0b7\uf076\uf0d8\uf0fc\uf06e\uf0a8]|\(?([0-9]{1,3}|[a-z]|[ivx]{1,5})[.)])$/iu;

/**
 * A lone symbol set apart from the text after it: a bullet whose font has no Unicode mapping (Word's
 * Wingdings bullet reaches pdf.js as "!" or a private-use character).
 */
export const SYMBOL_MARKER = /^[^\p{L}\p{N}\s([{"“‘'«$€£¥%#@&]$/u;

/** A segment that only marks a list item. */
export const isMarker = (text: string): boolean => MARKER_ONLY.test(text) || SYMBOL_MARKER.test(text);

const MIN_ROWS = 3;

const rowCandidate = (l: Line): boolean => l.segs.length >= 2 && !isMarker(l.segs[0]?.text ?? '');

/** A line that continues the row above: set close under it, its segments inside the columns. */
function continuation(prev: Line, l: Line): boolean {
  return prev.y - l.y > 0 && prev.y - l.y < 1.3 * Math.max(l.size, prev.size);
}

/** The columns of a run: the x-ranges its rows' segments cover, split where no segment crosses. */
function columns(rows: readonly Line[]): [number, number][] {
  const spans = rows.flatMap((r) => r.segs.map((s) => [s.x0, s.x1] as [number, number])).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  const tol = 0.3 * (rows[0]?.size ?? 10);
  for (const [a, b] of spans) {
    const last = out[out.length - 1];
    if (last !== undefined && a <= last[1] + tol) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

const columnOf = (cols: readonly [number, number][], s: Segment): number[] =>
  cols.flatMap(([a, b], i) => (s.x0 < b && s.x1 > a ? [i] : []));

/** The table that `run` (lines in order, the first a row) forms, or null; `used` is how many of its lines it took. */
function tableOf(run: readonly Line[]): { table: Table; used: number } | null {
  const rowsOnly = run.filter(rowCandidate);
  if (rowsOnly.length < MIN_ROWS) return null;
  const cols = columns(rowsOnly);
  if (cols.length < 2) return null;
  const rows: string[][] = [];
  const lines: Line[] = [];
  for (const l of run) {
    const at = l.segs.map((s) => columnOf(cols, s));
    if (at.some((c) => c.length !== 1)) break;
    const cells: string[] = rows.length === 0 || rowCandidate(l) ? Array.from({ length: cols.length }, () => '') : (rows.pop() as string[]);
    l.segs.forEach((s, i) => {
      const c = (at[i] as number[])[0] as number;
      cells[c] = cells[c] === '' ? s.text : `${cells[c]} ${s.text}`;
    });
    rows.push(cells);
    lines.push(l);
  }
  if (rows.length < MIN_ROWS) return null;
  // A table whose first column is nothing but markers is a list set with wide gaps.
  if (rows.every((r) => isMarker(r[0] ?? ''))) return null;
  return { table: { kind: 'table', rows, lines }, used: lines.length };
}

/** A page's lines, with the runs that form tables replaced by their tables. */
export function findTables(lines: readonly Line[]): (Line | Table)[] {
  const out: (Line | Table)[] = [];
  for (let i = 0; i < lines.length;) {
    const first = lines[i] as Line;
    if (!rowCandidate(first)) {
      out.push(first);
      i++;
      continue;
    }
    let j = i + 1;
    while (j < lines.length) {
      const prev = lines[j - 1] as Line;
      const l = lines[j] as Line;
      const pitch = prev.y - l.y;
      if (rowCandidate(l) ? pitch > 0 && pitch < 3 * Math.max(l.size, prev.size) : continuation(prev, l)) j++;
      else break;
    }
    const found = tableOf(lines.slice(i, j));
    if (found === null) {
      out.push(first);
      i++;
    } else {
      out.push(found.table);
      i += found.used;
    }
  }
  return out;
}
