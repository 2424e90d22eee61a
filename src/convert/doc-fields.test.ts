import { describe, expect, it } from 'vitest';
import { hideFields } from './doc-reader.js';

const shown = (text: string): string => hideFields(text).replace(/\u0000/g, '');

describe('hideFields', () => {
  it("keeps a field's result and drops its instruction, nested fields too, keeping the length", () => {
    const text = 'See \u0013 HYPERLINK "x" \u0014the \u0013 PAGEREF a \u0014plan\u0015\u0015 now';
    expect(shown(text)).toBe('See the plan now');
    expect(hideFields(text)).toHaveLength(text.length);
  });

  it("drops a table of contents' result with its instruction", () => {
    expect(shown('A\r\u0013 TOC \\o "1-3" \u0014One 1\rTwo 2\r\u0015B')).toBe('A\rB');
  });

  it('stays linear on a hostile run of field starts', () => {
    // Fields opened and left in their result: each character sits under all of them.
    const text = '\u0013\u0014'.repeat(200_000) + 'x';
    expect(shown(text)).toBe('x');
  });
});
