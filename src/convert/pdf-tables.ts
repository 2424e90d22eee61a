import { lineOf, type Line, type Segment } from './pdf-layout.js';

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
    // A segment across two columns, or a row whose segments all fall in one, is past the table's end.
    if (at.some((c) => c.length !== 1)) break;
    if (rowCandidate(l) && new Set(at.map((c) => c[0])).size < 2) break;
    const cells: string[] = rows.length === 0 || rowCandidate(l) ? Array.from({ length: cols.length }, () => '') : (rows.pop() as string[]);
    l.segs.forEach((s, i) => {
      const c = (at[i] as number[])[0] as number;
      cells[c] = cells[c] === '' ? s.text : `${cells[c]} ${s.text}`;
    });
    rows.push(cells);
    lines.push(l);
  }
  if (rows.filter((r) => r.filter((c) => c !== '').length >= 2).length < MIN_ROWS) return null;
  // A table whose first column is nothing but markers is a list set with wide gaps.
  if (rows.every((r) => isMarker(r[0] ?? ''))) return null;
  return { table: { kind: 'table', rows, lines }, used: lines.length };
}

/** How long a column's cells are on average, at least, for the "table" to be columns of running text. */
const PROSE_CELL_CHARS = 20;

/**
 * Columns of running text that the page sets one baseline at a time across all of them (IRS
 * instructions do) look like a table: every column's cells are long, and they hold most of its rows.
 */
function isProse(t: Table): boolean {
  const width = t.rows[0]?.length ?? 0;
  if (t.rows.length < 4 || width < 2) return false;
  for (let c = 0; c < width; c++) {
    const cells = t.rows.map((r) => r[c] ?? '').filter((x) => x !== '');
    if (cells.length < t.rows.length / 2) return false;
    if (cells.reduce((n, x) => n + x.length, 0) / cells.length < PROSE_CELL_CHARS) return false;
  }
  return true;
}

/** The lines of columns of running text, column by column: each line's segments in a column make a line of their own. */
function columnLines(t: Table): Line[] {
  const cols = columns(t.lines.filter(rowCandidate));
  const out: Line[] = [];
  cols.forEach((_, c) => {
    for (const l of t.lines) {
      const segs = l.segs.filter((s) => columnOf(cols, s)[0] === c);
      if (segs.length > 0) out.push(lineOf(l.page, segs));
    }
  });
  return out;
}

/** A page's lines, with the runs that form tables replaced by their tables (columns of running text by their columns' lines). */
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
      if (isProse(found.table)) out.push(...columnLines(found.table));
      else out.push(found.table);
      i += found.used;
    }
  }
  return out;
}
