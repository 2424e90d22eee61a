import { createLineSections, type LineSectionOptions } from '../line-sections.js';
import { readLineBatches } from '../read-text.js';
import type { Section } from '../types.js';

/** Streams a text file's lines through the line sectioner, a read piece at a time. */
export async function* lineFileSections(path: string, options: LineSectionOptions): AsyncGenerator<Section> {
  const sections = createLineSections(options);
  for await (const { lines } of readLineBatches(path)) {
    const out: Section[] = [];
    sections.pushLines(lines, out);
    yield* out;
  }
  yield* sections.end();
}
