import { inlineText } from './markdown.js';
import type { Block } from './slides.js';
import { child, find, findAll, textOf, type XEl } from './xml.js';

/** A cache's points (`c:pt idx` / `c:v`) by index, capped: a chart's own cached values, never its linked workbook. */
function points(el: XEl | undefined, max: number): string[] {
  const out: string[] = [];
  if (el === undefined) return out;
  for (const pt of findAll(el, 'c:pt')) {
    const idx = Number(pt.attrs.idx ?? -1);
    if (!Number.isInteger(idx) || idx < 0 || idx >= max) continue;
    const v = child(pt, 'c:v');
    out[idx] = v === undefined ? '' : inlineText(textOf(v));
  }
  return out;
}

/** Most categories (rows) and series (columns) of a chart written out. */
const MAX_POINTS = 1000;
const MAX_SERIES = 100;

/**
 * A DrawingML chart (c:chartSpace) as blocks: its title as a paragraph ("Chart: TITLE"), then a table of
 * its series' cached values by category (the first column the categories, one column a series).
 */
export function chartBlocks(chartSpace: XEl): Block[] {
  const chart = find(chartSpace, 'c:chart');
  if (chart === undefined) return [];
  const blocks: Block[] = [];
  const titleEl = child(chart, 'c:title');
  const title = titleEl === undefined ? '' : inlineText(findAll(titleEl, 'a:t').map(textOf).join(' '));
  if (title !== '') blocks.push({ kind: 'paragraph', text: `Chart: ${title}` });
  const series = findAll(chart, 'c:ser').slice(0, MAX_SERIES);
  if (series.length === 0) return blocks;
  const names = series.map((s, i) => {
    const tx = child(s, 'c:tx');
    if (tx === undefined) return `Series ${i + 1}`;
    const direct = child(tx, 'c:v');
    // A cached name (c:strRef's c:strCache), a literal one (c:v), or rich text; not the formula (c:f).
    return (
      points(tx, 1)[0] ||
      (direct && inlineText(textOf(direct))) ||
      inlineText(findAll(tx, 'a:t').map(textOf).join(' ')) ||
      `Series ${i + 1}`
    );
  });
  const categories = points(child(series[0] as XEl, 'c:cat') ?? child(series[0] as XEl, 'c:xVal'), MAX_POINTS);
  const values = series.map((s) => points(child(s, 'c:val') ?? child(s, 'c:yVal'), MAX_POINTS));
  const count = values.reduce((m, v) => Math.max(m, v.length), categories.length);
  const rows: string[][] = [['', ...names]];
  for (let i = 0; i < count; i++) rows.push([categories[i] ?? '', ...values.map((v) => v[i] ?? '')]);
  if (count > 0) blocks.push({ kind: 'table', rows });
  return blocks;
}
