/**
 * A PDF page's text items (as pdf.js gives them, in content-stream order) grouped into lines of
 * segments: a segment is text set on one baseline without a wide gap; a line is the segments that
 * share a baseline (a table row holds one segment per cell). Coordinates are PDF points with y up,
 * turned so that the page's main text runs left to right.
 */

/** What convertPdf keeps of one pdf.js TextItem. */
export type PdfTextItem = { str: string; transform: number[]; width: number; fontName: string };

export type Segment = { text: string; x0: number; x1: number; y: number; size: number; font: string };

export type Line = {
  page: number;
  segs: Segment[];
  x0: number;
  x1: number;
  y: number;
  /** The size and font that set most of its characters. */
  size: number;
  font: string;
  /** Every segment is in `font`. */
  uniform: boolean;
  text: string;
};

type Placed = Segment & { angle: number };

/** Text turned by a quarter turn or not at all; anything else (a diagonal watermark) is not read. */
function angleOf(t: number[]): number | null {
  const deg = (Math.atan2(t[1] ?? 0, t[0] ?? 1) * 180) / Math.PI;
  const quarter = Math.round(deg / 90);
  if (Math.abs(deg - quarter * 90) > 5) return null;
  return ((quarter % 4) + 4) % 4;
}

/** Point (x, y) seen with the page turned back by `quarter` quarter turns. */
function unturn(x: number, y: number, quarter: number): [number, number] {
  switch (quarter) {
    case 1:
      return [y, -x];
    case 2:
      return [-x, -y];
    case 3:
      return [-y, x];
    default:
      return [x, y];
  }
}

function place(items: readonly PdfTextItem[]): Placed[] {
  const out: Placed[] = [];
  for (const it of items) {
    if (it.str.trim() === '') continue;
    const t = it.transform;
    const angle = angleOf(t);
    const size = Math.hypot(t[2] ?? 0, t[3] ?? 0);
    if (angle === null || !(size > 0)) continue;
    const [x, y] = unturn(t[4] ?? 0, t[5] ?? 0, angle);
    out.push({ text: it.str, x0: x, x1: x + Math.abs(it.width), y, size, font: it.fontName, angle });
  }
  return out;
}

/** Keeps the items of the page's main direction (most characters) and drops text painted twice in place (a faked bold). */
function mainText(placed: Placed[]): Placed[] {
  const chars = [0, 0, 0, 0];
  for (const p of placed) chars[p.angle] = (chars[p.angle] ?? 0) + p.text.length;
  const main = chars.indexOf(Math.max(...chars));
  const kept: Placed[] = [];
  for (const p of placed) {
    if (p.angle !== main) continue;
    const twin = kept
      .slice(-4)
      .some((k) => k.text === p.text && Math.abs(k.x0 - p.x0) < 0.15 * p.size && Math.abs(k.y - p.y) < 0.15 * p.size);
    if (!twin) kept.push(p);
  }
  return kept;
}

/** The key that holds the most of the counts (ties: the smaller key, so that the result never depends on order). */
export function topKey<K extends string | number>(m: ReadonlyMap<K, number>): K | undefined {
  let best: K | undefined;
  let bestCount = -1;
  for (const [k, n] of m) if (n > bestCount || (n === bestCount && best !== undefined && k < best)) [best, bestCount] = [k, n];
  return best;
}

const add = <K>(m: Map<K, number>, k: K, n: number): void => {
  m.set(k, (m.get(k) ?? 0) + n);
};

/** A font size to the half point, as sizes are compared. */
export const sizeClass = (size: number): number => Math.round(size * 2) / 2;

/** Joins consecutive items on one baseline into segments; a gap wider than a font size starts a new segment. */
function segments(items: Placed[]): Segment[] {
  const out: Segment[] = [];
  let cur: Segment | null = null;
  let fonts = new Map<string, number>();
  let sizes = new Map<number, number>();
  let lastFont = '';
  const close = (): void => {
    if (cur === null) return;
    cur.font = topKey(fonts) ?? cur.font;
    cur.size = topKey(sizes) ?? cur.size;
    cur.text = cur.text.replace(/\s+/g, ' ').trim();
    if (cur.text !== '') out.push(cur);
    cur = null;
  };
  for (const it of items) {
    const size = Math.max(it.size, cur?.size ?? 0);
    const gap = cur === null ? 0 : it.x0 - cur.x1;
    if (cur === null || !(Math.abs(it.y - cur.y) < 0.25 * size && gap > -0.6 * size && gap < size)) {
      close();
      cur = { text: it.text, x0: it.x0, x1: it.x1, y: it.y, size: it.size, font: it.font };
      fonts = new Map([[it.font, it.text.length]]);
      sizes = new Map([[it.size, it.text.length]]);
      lastFont = it.font;
      continue;
    }
    const space = gap > 0.15 * size && !/\s$/.test(cur.text) && !/^\s/.test(it.text);
    // A soft hyphen that did not break its word reaches pdf.js as a space of no width, starting an item
    // in the same font right where the last one ended: the word goes on.
    const softBreak = it.font === lastFont && Math.abs(gap) < 0.02 * size && /\p{L}$/u.test(cur.text) && /^ \p{Ll}/u.test(it.text);
    cur.text += (space ? ' ' : '') + (softBreak ? it.text.slice(1) : it.text);
    cur.x1 = Math.max(cur.x1, it.x1);
    add(fonts, it.font, it.text.length);
    add(sizes, it.size, it.text.length);
    lastFont = it.font;
  }
  close();
  return out;
}

/** The line that `segs` (on one baseline) make on page `page`. */
export function lineOf(page: number, segs: Segment[]): Line {
  segs.sort((a, b) => a.x0 - b.x0);
  const sizes = new Map<number, number>();
  const fonts = new Map<string, number>();
  for (const s of segs) {
    add(sizes, sizeClass(s.size), s.text.length);
    add(fonts, s.font, s.text.length);
  }
  const font = topKey(fonts) ?? '';
  const main = segs.reduce((a, b) => (b.text.length > a.text.length ? b : a));
  return {
    page,
    segs,
    x0: segs[0]?.x0 ?? 0,
    x1: Math.max(...segs.map((s) => s.x1)),
    y: main.y,
    size: topKey(sizes) ?? main.size,
    font,
    uniform: segs.every((s) => s.font === font),
    text: segs.map((s) => s.text).join(' '),
  };
}

const overlaps = (a: Segment, b: Segment): boolean => a.x0 < b.x1 - 0.1 * a.size && b.x0 < a.x1 - 0.1 * a.size;

/** How many lines back a segment may join a line on its baseline (a table cell that wraps is set before the next cell). */
const REJOIN_WINDOW = 4;
/** The widest a wrapped cell's lines are, as a part of the page's width: a column of running text is wider. */
const CELL_WIDTH = 0.3;

/** Groups segments into lines, in the order the page sets them (`pageWidth` in points). */
function lines(page: number, segs: Segment[], pageWidth: number): Line[] {
  const open: Segment[][] = [];
  for (const s of segs) {
    const last = open[open.length - 1];
    const sameBaseline = (l: Segment[]): boolean => {
      const ref = l.reduce((a, b) => (b.text.length > a.text.length ? b : a));
      const tol = (ref.size < s.size * 0.85 || s.size < ref.size * 0.85 ? 0.5 : 0.25) * Math.max(ref.size, s.size);
      return Math.abs(ref.y - s.y) < tol && !l.some((o) => overlaps(o, s));
    };
    if (last !== undefined && sameBaseline(last) && s.x0 > Math.max(...last.map((o) => o.x0))) {
      last.push(s);
      continue;
    }
    // A wrapped cell's second line comes before the row's next cell: join the row a few lines up.
    let joined = false;
    const narrow = (b: Segment[]): boolean => b.every((o) => o.y < s.y && o.x1 - o.x0 <= CELL_WIDTH * pageWidth);
    for (let i = open.length - 2; i >= Math.max(0, open.length - REJOIN_WINDOW); i--) {
      const l = open[i] as Segment[];
      if (sameBaseline(l) && narrow(l) && open.slice(i + 1).every(narrow)) {
        l.push(s);
        joined = true;
        break;
      }
    }
    if (!joined) open.push([s]);
  }
  return open.map((l) => lineOf(page, l));
}

/**
 * When most steps from one line to the next go up the page, the content stream is not in reading
 * order: lines are then read top to bottom, left to right.
 */
function readingOrder(list: Line[]): Line[] {
  if (list.length < 6) return list;
  let up = 0;
  for (let i = 1; i < list.length; i++) {
    const a = list[i - 1] as Line;
    const b = list[i] as Line;
    if (b.y > a.y + a.size && b.x0 < a.x1) up++;
  }
  if (up / (list.length - 1) < 0.4) return list;
  return [...list].sort((a, b) => b.y - a.y || a.x0 - b.x0);
}

/** A page's box (x0, y0, x1, y1), in the coordinates its lines are given in. */
export type Box = { x0: number; y0: number; x1: number; y1: number };

/** The lines of page `page` (1-based) from its text items and its view box ([x0, y0, x1, y1], as pdf.js gives it). */
export function pageLines(page: number, items: readonly PdfTextItem[], view: readonly number[]): { lines: Line[]; box: Box } {
  const text = mainText(place(items));
  const quarter = text[0]?.angle ?? 0;
  const [ax, ay] = unturn(view[0] ?? 0, view[1] ?? 0, quarter);
  const [bx, by] = unturn(view[2] ?? 0, view[3] ?? 0, quarter);
  const box = { x0: Math.min(ax, bx), y0: Math.min(ay, by), x1: Math.max(ax, bx), y1: Math.max(ay, by) };
  return { lines: readingOrder(lines(page, segments(text), box.x1 - box.x0)), box };
}
