/** A piece of text the chunker packs, and the separator that joins it to the piece before it. */
export type Piece = { text: string; sep: string; row?: number };

type Level = { split(text: string): string[]; sep: string };

/** Ever finer cuts for a unit too long for one chunk: lines, then sentences, then words. */
const LEVELS: readonly Level[] = [
  { split: (t) => t.split('\n'), sep: '\n' },
  { split: (t) => t.split(/(?<=[.!?;。！？])\s+/u), sep: ' ' },
  { split: (t) => t.split(/\s+/u), sep: ' ' },
];

/** Cuts text into slices of at most `max` UTF-16 units without splitting a surrogate pair. */
export function hardCut(text: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + max);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && end - start > 1 && code >= 0xd800 && code <= 0xdbff) end--;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/** Pieces of one unit (paragraph or record), each at most `budget` long, cut at the coarsest boundary that fits. */
export function unitPieces(unit: string, budget: number, sep: string, level = 0): Piece[] {
  const out: Piece[] = [];
  addUnitPieces(out, unit, budget, sep, level);
  return out;
}

function addUnitPieces(out: Piece[], unit: string, budget: number, sep: string, level: number): void {
  if (unit.length <= budget) {
    out.push({ text: unit, sep });
    return;
  }
  const cut = LEVELS[level];
  if (cut === undefined) {
    hardCut(unit, budget).forEach((text, i) => out.push({ text, sep: i === 0 ? sep : '' }));
    return;
  }
  const parts = cut.split(unit);
  let kept = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = (parts[i] as string).trim();
    if (part !== '') parts[kept++] = part;
  }
  if (kept <= 1) return addUnitPieces(out, unit, budget, sep, level + 1);
  for (let i = 0; i < kept; i++) addUnitPieces(out, parts[i] as string, budget, i === 0 ? sep : cut.sep, level + 1);
}

/**
 * Pieces of some lines of a paragraph already known to be too long for one chunk and to have more
 * than one line, exactly as `unitPieces` cuts such a paragraph: line by line (the first joined by
 * `firstSep`, the others by a line break), a line cut further only when it alone is too long.
 */
export function paragraphLinePieces(lines: string, budget: number, firstSep: string): Piece[] {
  const out: Piece[] = [];
  let first = true;
  for (const raw of lines.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    addUnitPieces(out, line, budget, first ? firstSep : '\n', 1);
    first = false;
  }
  return out;
}

/** True when text has at least two lines that are not blank. */
export function hasTwoLines(text: string): boolean {
  let seen = 0;
  for (const line of text.split('\n')) if (line.trim() !== '' && ++seen === 2) return true;
  return false;
}

/** What separates two paragraphs of prose: a blank line. */
export const PARAGRAPH_BREAK = /\n[ \t]*\n/;

/** The longest tail of `text` of at most `max` characters that starts at a word boundary ("" if none). */
export function wordTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const tail = text.slice(text.length - max);
  const space = tail.search(/\s/u);
  return space < 0 ? '' : tail.slice(space).trim();
}

/** `text` cut to at most `max` characters at a word boundary when one exists, with "…" when cut. */
export function truncateAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, Math.max(1, max - 1));
  const lastSpace = cut.search(/\s\S*$/u);
  return `${(lastSpace > 0 ? cut.slice(0, lastSpace) : cut).trimEnd()}…`;
}
