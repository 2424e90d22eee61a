import { describe, expect, it } from 'vitest';
import { atxHeading } from './atx-heading.js';

// What the former pattern gave, `/^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/` with its capture trimmed.
const PATTERN = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const byPattern = (line: string): { level: number; text: string } | undefined => {
  const m = PATTERN.exec(line);
  return m ? { level: m[1]?.length ?? 0, text: (m[2] ?? '').trim() } : undefined;
};

describe('atxHeading', () => {
  it.each([
    ['# Title', { level: 1, text: 'Title' }],
    ['###### Six', { level: 6, text: 'Six' }],
    ['   ## Indented ##', { level: 2, text: 'Indented' }],
    ['## Closing ##   ', { level: 2, text: 'Closing' }],
    ['#', { level: 1, text: '' }],
    ['#   ', { level: 1, text: '' }],
    ['# ###', { level: 1, text: '###' }],
    ['# a#', { level: 1, text: 'a#' }],
    ['# C# and F#', { level: 1, text: 'C# and F#' }],
    ['#\tTabbed\t#', { level: 1, text: 'Tabbed' }],
    ['#hashtag', undefined],
    ['####### seven', undefined],
    ['    # code', undefined],
    ['\t# tab indent', undefined],
    ['# line\u2028separator', undefined],
    ['', undefined],
  ])('reads %j', (line, expected) => {
    expect(atxHeading(line)).toEqual(expected);
    expect(byPattern(line)).toEqual(expected);
  });

  it('agrees with the former pattern on every short line of spaces, tabs, hashes and text', () => {
    const alphabet = [' ', '\t', '#', 'a', '\u00a0'];
    const lines: string[] = [''];
    for (let len = 1; len <= 6; len++) {
      const count = alphabet.length ** len;
      for (let n = 0; n < count; n++) {
        let line = '';
        for (let k = 0, rest = n; k < len; k++, rest = Math.floor(rest / alphabet.length)) line += alphabet[rest % alphabet.length];
        lines.push(line, `#${line}`);
      }
    }

    const disagreements = lines.filter((l) => JSON.stringify(atxHeading(l)) !== JSON.stringify(byPattern(l)));

    expect(lines.length).toBeGreaterThan(30_000);
    expect(disagreements).toEqual([]);
  });

  it('reads a heading line holding a huge run of spaces (the pattern backtracked for minutes)', () => {
    const spaces = ' '.repeat(200_000);

    expect(atxHeading(`# a${spaces}x`)).toEqual({ level: 1, text: `a${spaces}x` });
    expect(atxHeading(`## a${spaces}##${spaces}`)).toEqual({ level: 2, text: 'a' });
  });
});
