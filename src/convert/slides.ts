import type { MarkdownWriter } from './markdown.js';

/** One block of a slide's (or a text document's) body, in reading order. */
export type Block =
  | { kind: 'paragraph'; text: string }
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'item'; depth: number; text: string; number?: number }
  | { kind: 'table'; rows: string[][] }
  | { kind: 'code'; text: string };

export type Slide = { title: string; blocks: Block[]; notes: string[] };

export function writeBlocks(md: MarkdownWriter, blocks: readonly Block[]): void {
  for (const b of blocks) {
    if (b.kind === 'paragraph') md.paragraph(b.text);
    else if (b.kind === 'heading') md.heading(b.level, b.text);
    else if (b.kind === 'item') md.item(b.depth, b.text, b.number);
    else if (b.kind === 'code') md.code(b.text);
    else md.table(b.rows);
  }
}

/** Slides as `## Slide N: TITLE` (or `## Slide N`), their content, then their speaker notes as a `> Notes:` quote. */
export function writeSlides(md: MarkdownWriter, slides: readonly Slide[]): void {
  slides.forEach((slide, i) => {
    const title = slide.title.replace(/\s+/g, ' ').trim();
    md.heading(2, title === '' ? `Slide ${i + 1}` : `Slide ${i + 1}: ${title}`);
    writeBlocks(md, slide.blocks);
    md.quote('Notes:', slide.notes);
  });
}

/** Numbers for ordered items: each run of numbered items at a depth counts from 1, reset by any other block. */
export function numberItems(blocks: Block[]): Block[] {
  const counters: number[] = [];
  return blocks.map((b) => {
    if (b.kind !== 'item') {
      counters.length = 0;
      return b;
    }
    counters.length = b.depth + 1;
    if (b.number === undefined) {
      counters[b.depth] = 0;
      return b;
    }
    counters[b.depth] = (counters[b.depth] ?? 0) + 1;
    return { ...b, number: counters[b.depth] };
  });
}
