import type { Box, Line } from './pdf-layout.js';

/**
 * Running headers and footers: lines near the top or the foot of a page that repeat on most pages
 * at the same height, their numbers aside ("Page 3", "3/12", a date, a title), and a line there that
 * is only a page number. A line set larger than the body text repeats only word for word: "Section 4"
 * heading each page of a document that starts every section on a new page is kept. They are dropped: they say nothing of the page and would repeat in every
 * chunk the service cuts.
 */

/** The part of the page's height, at its top and at its foot, where headers and footers sit. */
const BAND = 0.12;
/** How many lines from the top and from the foot of each page may be a header or a footer. */
const LINES_PER_BAND = 3;
/** Points a repeated line's height may move between pages. */
const HEIGHT_TOLERANCE = 3;

type Candidate = { page: number; line: Line; key: string; height: number };

const PAGE_NUMBER = /^(page\s+)?([0-9]+|[ivxlc]+)(\s*(of|\/)\s*[0-9]+)?$|^[-–—]\s*[0-9]+\s*[-–—]$/i;

/** A line's text with its numbers as `#` (when set no larger than the body), for comparing a running line across pages. */
function shape(line: Line, bodySize: number): string {
  const text = line.text.toLowerCase().replace(/\s+/g, ' ').trim();
  return line.size > 1.12 * bodySize ? `=${text}` : text.replace(/[0-9]+/g, '#');
}

function bandLines(lines: readonly Line[], box: Box): { top: Line[]; foot: Line[] } {
  const height = box.y1 - box.y0;
  const byHeight = [...lines].sort((a, b) => b.y - a.y);
  const top = byHeight.filter((l) => l.y > box.y1 - BAND * height).slice(0, LINES_PER_BAND);
  const foot = byHeight
    .reverse()
    .filter((l) => l.y < box.y0 + BAND * height)
    .slice(0, LINES_PER_BAND);
  return { top, foot };
}

/** The pages' lines without their running headers, footers and page numbers (`bodySize`: the body text's font size). */
export function dropFurniture(pages: readonly { lines: Line[]; box: Box }[], bodySize: number): Line[][] {
  const drop = new Set<Line>();
  const candidates: Candidate[] = [];
  pages.forEach(({ lines, box }, i) => {
    const { top, foot } = bandLines(lines, box);
    for (const line of top) candidates.push({ page: i, line, key: `top:${shape(line, bodySize)}`, height: box.y1 - line.y });
    for (const line of foot) candidates.push({ page: i, line, key: `foot:${shape(line, bodySize)}`, height: line.y - box.y0 });
    for (const line of [...top, ...foot]) if (PAGE_NUMBER.test(line.text.trim())) drop.add(line);
  });
  const needed = Math.max(2, Math.floor(pages.length / 2));
  const byKey = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const group = byKey.get(c.key);
    if (group === undefined) byKey.set(c.key, [c]);
    else group.push(c);
  }
  for (const group of byKey.values()) {
    if (group.length < needed) continue;
    // Pages by the height (to the point) the line sits at; a line counts the pages within the tolerance of its own height.
    const pagesAt = new Map<number, Set<number>>();
    for (const c of group) {
      const at = Math.round(c.height);
      const set = pagesAt.get(at) ?? new Set<number>();
      set.add(c.page);
      pagesAt.set(at, set);
    }
    for (const c of group) {
      let count = 0;
      const at = Math.round(c.height);
      for (let h = at - HEIGHT_TOLERANCE; h <= at + HEIGHT_TOLERANCE; h++) count += pagesAt.get(h)?.size ?? 0;
      if (count >= needed) drop.add(c.line);
    }
  }
  return pages.map(({ lines }) => lines.filter((l) => !drop.has(l)));
}
