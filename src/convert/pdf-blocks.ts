import { sizeClass, topKey, type Line } from './pdf-layout.js';
import { isMarker, SYMBOL_MARKER, type Table } from './pdf-tables.js';

/**
 * A page's lines (and tables) grouped into blocks: paragraphs rejoined across line breaks and
 * hyphenation, list items with their markers, tables. A block ends at a wider gap than the body's
 * line spacing, a change of size, a list marker, a change of indent, or a line that ends
 * short of the column although the next line's first word would have fitted (the writer broke it).
 */

/** What the body text of the whole document is set in. */
export type BodyStats = {
  size: number;
  font: string;
  /** Baseline to baseline within a paragraph of body text, in points. */
  leading: number;
  /** Fonts used for words inside lines of another font (emphasis), which a heading font is not. */
  inlineFonts: Set<string>;
};

export type TextBlock = { kind: 'text'; page: number; lines: Line[]; text: string; size: number; font: string; uniform: boolean };
export type ItemBlock = {
  kind: 'item';
  page: number;
  lines: Line[];
  text: string;
  markerX: number;
  textX: number | null;
  /** The item's number for `1. `, null for `- `; `label` keeps a letter or roman numeral. */
  number: number | null;
  label: string | null;
};
export type TableBlock = Table & { page: number };
export type Block = TextBlock | ItemBlock | TableBlock;

export function bodyStats(pages: readonly Line[][]): BodyStats {
  const sizes = new Map<number, number>();
  for (const page of pages) for (const l of page) sizes.set(sizeClass(l.size), (sizes.get(sizeClass(l.size)) ?? 0) + l.text.length);
  const size = topKey(sizes) ?? 10;
  const fonts = new Map<string, number>();
  const inlineFonts = new Set<string>();
  const steps: number[] = [];
  for (const page of pages) {
    page.forEach((l, i) => {
      if (sizeClass(l.size) !== size) return;
      fonts.set(l.font, (fonts.get(l.font) ?? 0) + l.text.length);
      for (const s of l.segs) if (s.font !== l.font) inlineFonts.add(s.font);
      const next = page[i + 1];
      const dy = next === undefined ? 0 : l.y - next.y;
      if (next !== undefined && sizeClass(next.size) === size && dy > 0.8 * size && dy < 2.5 * size) steps.push(dy);
    });
  }
  steps.sort((a, b) => a - b);
  return { size, font: topKey(fonts) ?? '', leading: steps[steps.length >> 1] ?? 1.2 * size, inlineFonts };
}

type Marker = { kind: 'bullet' | 'number' | 'label'; rest: string; number: number | null; label: string | null };

const BULLET = /^(?:[•◦▪▫●○■□‣⁃∙·]|[\uf0a7\uf0b7\uf076\uf0d8\uf0fc\uf06e\uf0a8])\s*(.+)$/u;
const DASH = /^[*–—-]\s+(.+)$/u;
const NUMBER = /^\(?([0-9]{1,3})[.)]\s+(.+)$/u;
const LABEL = /^(\(?(?:[a-z]|[ivx]{1,5})[.)]|\(?[A-Z]\))\s+(.+)$/u;

/** The list marker `l` starts with, if any: a bullet, a number, a letter, or a lone symbol set apart (SYMBOL_MARKER). */
function markerOf(l: Line): Marker | null {
  const [first, second] = l.segs;
  if (first !== undefined && second !== undefined && SYMBOL_MARKER.test(first.text))
    return {
      kind: 'bullet',
      rest: l.segs
        .slice(1)
        .map((s) => s.text)
        .join(' '),
      number: null,
      label: null,
    };
  const text = l.text;
  let m = BULLET.exec(text) ?? DASH.exec(text);
  if (m !== null) return { kind: 'bullet', rest: m[1] as string, number: null, label: null };
  m = NUMBER.exec(text);
  if (m !== null) return { kind: 'number', rest: m[2] as string, number: Number(m[1]), label: null };
  m = LABEL.exec(text);
  if (m !== null) return { kind: 'label', rest: m[2] as string, number: null, label: m[1] as string };
  return null;
}

const HYPHEN_END = /\p{L}[-\u2010\u00ad]$/u;

/**
 * Lines of one block as one line of text: a word broken by a hyphen before a lowercase letter is
 * mended without it; before anything else the hyphen stays, without a space after it.
 */
export function joinLines(texts: readonly string[]): string {
  let out = '';
  for (const raw of texts) {
    const t = raw
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
      .replace(/[\s\u00a0]+/g, ' ')
      .trim();
    if (t === '') continue;
    if (out === '') out = t;
    else if (out.endsWith('\u00ad') || (HYPHEN_END.test(out) && /^\p{Ll}/u.test(t))) out = out.slice(0, -1) + t;
    // "Jean-" then "Paul": the hyphen belongs to the word, which goes on.
    else if (HYPHEN_END.test(out)) out += t;
    else out += ` ${t}`;
  }
  return out.replace(/\u00ad/g, '');
}

const lineWidth = (l: Line): number => l.x1 - l.x0;

type Ctx = { stats: BodyStats };

/** How many of a block's last lines are looked at for the edge of its column. */
const EDGE_LINES = 50;

/**
 * The right edge of the column `p` ends the block in: the furthest the block's lines that start
 * where `p` does (give or take an indent of 3 font sizes) reach, and `also` (the next line) when it does.
 */
function edgeOf(block: TextBlock | ItemBlock, p: Line, also: Line | null): number {
  const near = (l: Line): boolean => Math.abs(l.x0 - p.x0) <= 3 * p.size;
  let edge = p.x1;
  for (const l of block.lines.slice(-EDGE_LINES)) if (near(l)) edge = Math.max(edge, l.x1);
  return also !== null && near(also) ? Math.max(edge, also.x1) : edge;
}

/** True when `p` ends a paragraph: the first word of `c` would have fitted before `edge`. */
function endsShort(p: Line, c: Line, edge: number): boolean {
  if (HYPHEN_END.test(p.text)) return false;
  const word = c.text.split(' ')[0] ?? '';
  const charWidth = lineWidth(c) / Math.max(1, c.text.length);
  return edge - p.x1 > word.length * charWidth + 0.6 * p.size;
}

/**
 * Whether `c`, set higher up and to the right of `p`, is the top of the next column and carries on
 * the sentence `p` ends the column with: the same size, `p` full to its edge, and `c` going on in
 * lowercase (or `p` ending in a hyphen).
 */
function nextColumn(block: TextBlock | ItemBlock, p: Line, c: Line): boolean {
  if (c.x0 < p.x1 || sizeClass(p.size) !== sizeClass(c.size)) return false;
  return (HYPHEN_END.test(p.text) || /^\p{Ll}/u.test(c.text)) && !endsShort(p, c, edgeOf(block, p, null));
}

/** Whether line `c` goes on the block that ends with line `p`. */
function continues(ctx: Ctx, block: TextBlock | ItemBlock, p: Line, c: Line): boolean {
  const size = Math.max(p.size, c.size);
  const dy = p.y - c.y;
  if (dy < 0.5 * Math.min(p.size, c.size)) return nextColumn(block, p, c);
  if (dy > 1.3 * ctx.stats.leading * (size / ctx.stats.size)) return false;
  if (Math.abs(sizeClass(p.size) - sizeClass(c.size)) > 0.5 && Math.abs(p.size - c.size) > 0.08 * size) return false;
  if (block.kind === 'item') {
    // Wrapped lines of an item hang under its text or start under its marker; in IRS-style lists,
    // whose items are paragraphs with an indented first line, they go back to the column's edge.
    const outdent = block.lines.length === 1 ? 3 * c.size : 0.3 * c.size;
    if (c.x0 < block.markerX - outdent) return false;
    if (block.textX !== null && Math.abs(c.x0 - block.textX) > c.size) return false;
    if (block.lines.length >= 2 && Math.abs(c.x0 - (block.lines[1] as Line).x0) > 0.8 * c.size) return false;
  } else if (p !== block.lines[0] && Math.abs(c.x0 - p.x0) > 0.8 * c.size) {
    // Past a paragraph's first line (which may be indented, or hang), its lines start where the last one did.
    return false;
  }
  return !endsShort(p, c, edgeOf(block, p, c));
}

function startBlock(page: number, l: Line, marker: Marker | null): TextBlock | ItemBlock {
  if (marker === null) return { kind: 'text', page, lines: [l], text: '', size: l.size, font: l.font, uniform: l.uniform };
  const first = l.segs[0];
  const textX = l.segs.length >= 2 && first !== undefined && isMarker(first.text) ? (l.segs[1]?.x0 ?? null) : null;
  return { kind: 'item', page, lines: [l], text: '', markerX: l.x0, textX, number: marker.number, label: marker.label };
}

function finishBlock(b: TextBlock | ItemBlock, stats: BodyStats): Block {
  const texts = b.lines.map((l) => l.text);
  if (b.kind === 'item') {
    texts[0] = markerOf(b.lines[0] as Line)?.rest ?? (texts[0] as string);
    return { ...b, text: joinLines(texts) };
  }
  // Size and font of the block: those of most of its characters.
  const sizes = new Map<number, number>();
  const fonts = new Map<string, number>();
  for (const l of b.lines) {
    sizes.set(sizeClass(l.size), (sizes.get(sizeClass(l.size)) ?? 0) + l.text.length);
    fonts.set(l.font, (fonts.get(l.font) ?? 0) + l.text.length);
  }
  const font = topKey(fonts) ?? b.font;
  return {
    ...b,
    text: joinLines(texts),
    size: topKey(sizes) ?? stats.size,
    font,
    uniform: b.lines.every((l) => l.uniform && l.font === font),
  };
}

/** The blocks of one page, from its lines and tables in reading order. */
export function pageBlocks(page: number, entries: readonly (Line | Table)[], stats: BodyStats): Block[] {
  const ctx: Ctx = { stats };
  const out: Block[] = [];
  let cur: TextBlock | ItemBlock | null = null;
  const flush = (): void => {
    if (cur !== null) out.push(finishBlock(cur, stats));
    cur = null;
  };
  for (const e of entries) {
    if ('kind' in e) {
      flush();
      out.push({ ...e, page });
      continue;
    }
    const prev: Line | undefined = cur?.lines[cur.lines.length - 1];
    const heading = sizeClass(e.size) >= 1.12 * stats.size;
    let marker = heading ? null : markerOf(e);
    // "3. The results" running on from a line that ends mid-sentence, at its indent, is text, not an item.
    if (marker !== null && marker.kind !== 'bullet' && cur?.kind === 'text' && prev !== undefined && !/[.:;!?]$/.test(prev.text))
      if (e.x0 < prev.x0 + 0.5 * e.size && continues(ctx, cur, prev, e)) marker = null;
    if (cur !== null && prev !== undefined && marker === null && continues(ctx, cur, prev, e)) {
      cur.lines.push(e);
      continue;
    }
    flush();
    cur = startBlock(page, e, marker);
  }
  flush();
  return out;
}
