/** A piece of text the chunker packs, and the separator that joins it to the piece before it. */
export type Piece = { text: string; sep: string };

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
  if (unit.length <= budget) return [{ text: unit, sep }];
  const cut = LEVELS[level];
  if (cut === undefined) return hardCut(unit, budget).map((text, i) => ({ text, sep: i === 0 ? sep : '' }));
  const parts = cut.split(unit).map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length <= 1) return unitPieces(unit, budget, sep, level + 1);
  return parts.flatMap((part, i) => unitPieces(part, budget, i === 0 ? sep : cut.sep, level + 1));
}

/** Paragraphs of prose: blocks separated by blank lines, trimmed, empty ones dropped. */
export function paragraphsOf(text: string): string[] {
  return text.split(/\n[ \t]*\n/).map((p) => p.trim()).filter((p) => p !== '');
}

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
