import type { Block, BodyStats, ItemBlock, TextBlock } from './pdf-blocks.js';
import { sizeClass } from './pdf-layout.js';
import { titleKey } from './pdf-outline.js';

/**
 * Headings chosen from the blocks of the whole document, and the Markdown written from the blocks.
 * A heading is a short standalone block set larger than the body text, or set at about the body's
 * size in a font of its own (a bold heading) that sets no running text anywhere in the document;
 * levels follow the sizes, largest first (a title, when larger than every heading, is `#`).
 */

/** How much larger than the body a block is to count as a heading by its size alone. */
const LARGER = 1.12;

/** Fonts that set running text somewhere (a long block, a list item, words inside another font's line): no heading font. */
function runningFonts(pages: readonly Block[][], stats: BodyStats): Set<string> {
  const out = new Set(stats.inlineFonts);
  out.add(stats.font);
  for (const page of pages)
    for (const b of page) {
      if (b.kind === 'item') for (const l of b.lines) out.add(l.font);
      if (b.kind === 'text' && (b.lines.length > 2 || b.text.length > 100)) for (const l of b.lines) out.add(l.font);
    }
  return out;
}

function headingSize(b: TextBlock, stats: BodyStats, running: ReadonlySet<string>, monospace: ReadonlySet<string>): number | null {
  const text = b.text;
  if (!/\p{L}/u.test(text) || /[,;]$/.test(text)) return null;
  const size = sizeClass(b.size);
  if (size >= LARGER * stats.size) return b.lines.length <= 3 && text.length <= 150 ? size : null;
  const ownFont = b.uniform && !running.has(b.font) && !monospace.has(b.font);
  if (ownFont && size >= 0.95 * stats.size && b.lines.length <= 2 && text.length <= 100 && !/[.:]$/.test(text)) return size;
  return null;
}

/**
 * Keeps the headings the outline confirms, when it names at least two and at least half of its
 * entries are found: a heading it does not name stays one if set larger than every heading it names
 * (a title) or in the size and font of one it names (an unnumbered heading LaTeX leaves out of it),
 * so that an author's or a date's line under the title is text; and a short standalone block it
 * names is a heading at whatever size.
 */
function confirmed(sizes: Map<TextBlock, number>, others: readonly TextBlock[], titles: ReadonlySet<string>): Map<TextBlock, number> {
  if (titles.size === 0) return sizes;
  const named = (b: TextBlock): boolean => titles.has(titleKey(b.text));
  const found = [...sizes.keys()].filter(named);
  const added = others.filter((b) => b.lines.length <= 2 && b.text.length <= 150 && named(b));
  if (found.length + added.length < Math.max(2, 0.5 * titles.size)) return sizes;
  const style = (b: TextBlock): string => `${sizeClass(b.size)} ${b.font}`;
  const styles = new Set([...found, ...added].map(style));
  const top = Math.max(0, ...found.map((b) => sizes.get(b) as number), ...added.map((b) => sizeClass(b.size)));
  const out = new Map([...sizes].filter(([b, size]) => size > top || named(b) || styles.has(style(b))));
  for (const b of added) out.set(b, sizeClass(b.size));
  return out;
}

/** The heading level of each heading block (`titles`: the outline's, from outlineTitles). */
export function headingLevels(
  pages: readonly Block[][],
  stats: BodyStats,
  monospace: ReadonlySet<string>,
  titles: ReadonlySet<string>,
): Map<Block, number> {
  const running = runningFonts(pages, stats);
  let sizes = new Map<TextBlock, number>();
  const others: TextBlock[] = [];
  for (const page of pages) {
    for (const b of page) {
      if (b.kind !== 'text') continue;
      const size = headingSize(b, stats, running, monospace);
      if (size === null) others.push(b);
      else sizes.set(b, size);
    }
  }
  sizes = confirmed(sizes, others, titles);
  const ranked = [...new Set(sizes.values())].sort((a, b) => b - a);
  return new Map([...sizes].map(([b, size]) => [b, Math.min(6, ranked.indexOf(size) + 1)]));
}

const LINE_START = /^(#|[-+*](\s|$)|>|<|```|~~~|={3,}|\|)/;
const ORDERED_START = /^(\d+)([.)])/;

/** Text as one Markdown line that reads as the text it is (structure at its start escaped). */
export function escapeLine(text: string): string {
  if (LINE_START.test(text)) return `\\${text}`;
  return text.replace(ORDERED_START, '$1\\$2');
}

const cell = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|');

function table(rows: readonly string[][]): string {
  const width = Math.max(...rows.map((r) => r.length));
  const line = (r: readonly string[]): string =>
    `|${Array.from({ length: width }, (_, i) => {
      const c = cell(r[i] ?? '');
      return c === '' ? ' |' : ` ${c} |`;
    }).join('')}`;
  return [line(rows[0] ?? []), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join('\n');
}

/** The nesting depth of each item of a run of items: the rank of its marker's indent among the run's. */
function depths(run: readonly ItemBlock[]): number[] {
  const xs: number[] = [];
  for (const b of [...run].sort((a, c) => a.markerX - c.markerX)) {
    const size = b.lines[0]?.size ?? 10;
    if (xs.length === 0 || b.markerX - (xs[xs.length - 1] as number) > 0.5 * size) xs.push(b.markerX);
  }
  return run.map((b) => {
    let d = 0;
    xs.forEach((x, i) => {
      if (b.markerX >= x - 0.5 * (b.lines[0]?.size ?? 10)) d = i;
    });
    return d;
  });
}

function item(b: ItemBlock, depth: number): string {
  const marker = b.number === null ? '-' : `${b.number}.`;
  const text = b.label === null ? escapeLine(b.text) : `${b.label} ${b.text}`;
  return `${'  '.repeat(depth)}${marker} ${text}`;
}

/** One page's Markdown: its marker, then its blocks (consecutive items form one list). */
export function pageMarkdown(page: number, blocks: readonly Block[], levels: ReadonlyMap<Block, number>): string {
  const parts: string[] = [`<!-- page ${page} -->`];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i] as Block;
    if (b.kind === 'table') parts.push(table(b.rows));
    else if (b.kind === 'text') {
      if (b.text === '') continue;
      const level = levels.get(b);
      parts.push(level === undefined ? escapeLine(b.text) : `${'#'.repeat(level)} ${b.text}`);
    } else {
      const run: ItemBlock[] = [];
      for (; i < blocks.length && blocks[i]?.kind === 'item'; i++) run.push(blocks[i] as ItemBlock);
      i--;
      const d = depths(run);
      const lines = run.filter((r) => r.text !== '').map((r) => item(r, d[run.indexOf(r)] ?? 0));
      if (lines.length > 0) parts.push(lines.join('\n'));
    }
  }
  return parts.join('\n\n');
}
