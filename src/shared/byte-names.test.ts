import { describe, expect, it } from 'vitest';
import { escapedName, lossyName, shellQuotedName } from './byte-names.js';

const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

describe('names that are not valid UTF-8', () => {
  it('writes each bad byte as \\xHH and every valid character as it is', () => {
    expect(escapedName(bytes('caf', [0xe9], '.md'))).toBe('caf\\xE9.md');
    expect(escapedName(bytes('d', [0xe9], 'jà vu ✓ 😀.md'))).toBe('d\\xE9jà vu ✓ 😀.md');
    // A sequence cut short, an overlong form, a surrogate, a byte past U+10FFFF: each byte is escaped.
    expect(escapedName(bytes('a', [0xe2, 0x82], 'b'))).toBe('a\\xE2\\x82b');
    expect(escapedName(bytes([0xc0, 0xaf]))).toBe('\\xC0\\xAF');
    expect(escapedName(bytes([0xed, 0xa0, 0x80]))).toBe('\\xED\\xA0\\x80');
    expect(escapedName(bytes([0xf5, 0x80]))).toBe('\\xF5\\x80');
    expect(escapedName(bytes('plain.md'))).toBe('plain.md');
    // A backslash too, so that a name holding the text `\xE9` cannot read as the byte.
    expect(escapedName(bytes('a\\xE9', [0xff]))).toBe('a\\x5CxE9\\xFF');
  });

  it("gives a shell word for the bytes ($'...'), quotes and backslashes of the name escaped", () => {
    expect(shellQuotedName(bytes('caf', [0xe9], '.md'))).toBe("$'caf\\xE9.md'");
    expect(shellQuotedName(bytes("it's\\", [0xff]))).toBe("$'it\\'s\\x5C\\xFF'");
  });

  it('gives back the string Node reads for those bytes', () => {
    for (const raw of [
      bytes('caf', [0xe9], '.md'),
      bytes('a', [0xe2, 0x82], 'b'),
      bytes([0xc0, 0xaf], 'x'),
      bytes('ok'),
      bytes('\\xE9', [0x80]),
    ])
      expect(lossyName(escapedName(raw))).toBe(raw.toString('utf8'));
  });
});
