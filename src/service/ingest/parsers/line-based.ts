import { createLineSections, type LineSectionOptions } from '../line-sections.js';
import { readLines } from '../read-text.js';
import type { Section } from '../types.js';

/** Streams a text file's lines through the line sectioner. */
export async function* lineFileSections(path: string, options: LineSectionOptions): AsyncGenerator<Section> {
  const sections = createLineSections(options);
  for await (const { line } of readLines(path)) yield* sections.push(line);
  yield* sections.end();
}
