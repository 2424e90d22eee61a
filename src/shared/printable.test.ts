import { describe, expect, it } from 'vitest';
import { printable } from './printable.js';

describe('text shown to a person', () => {
  it('leaves printable text as it is, quotes and escapes text with a control character, and is idempotent', () => {
    for (const plain of ['notes.md', 'a b/c "d".md', 'back\\slash.md', 'café ☕.md', '']) expect(printable(plain)).toBe(plain);
    expect(printable('line\nbreak.md')).toBe('"line\\nbreak.md"');
    expect(printable('tab\there.md')).toBe('"tab\\there.md"');
    expect(printable('cr\r "q" \\ \x1b[31m\x7f\x85.md')).toBe('"cr\\r \\"q\\" \\\\ \\x1b[31m\\x7f\\x85.md"');
    expect(printable('evil\u202Etxt.md\u2028')).toBe('"evil\\u{202e}txt.md\\u{2028}"');
    const once = printable('a\nb\tc');
    expect(printable(once)).toBe(once);
    expect(once).not.toMatch(/[\n\t]/);
  });
});
