import { describe, expect, it } from 'vitest';
import { escapeLine, inlineText, MarkdownWriter } from './markdown.js';

describe('escapeLine', () => {
  it('escapes line starts Markdown would read as structure, and nothing else', () => {
    for (const text of [
      '# not a heading',
      '#5 is text',
      '- not an item',
      '+ nor this',
      '* nor this',
      '> not a quote',
      '```',
      '---',
      '| a | b |',
    ]) {
      expect(escapeLine(text)).toBe(`\\${text}`);
    }
    expect(escapeLine('12. not a list')).toBe('12\\. not a list');
    expect(escapeLine('3) nor this')).toBe('3\\) nor this');
    for (const text of ['plain', '12 monkeys', '-5 degrees', 'a # b', '2.5 metres']) expect(escapeLine(text)).toBe(text);
  });

  it('rejoins a paragraph: line breaks, tabs and runs of spaces become one space, control characters go', () => {
    expect(inlineText('  one\ntwo\t\tthree\u00a0four\u0007 ')).toBe('one two three four');
  });
});

describe('MarkdownWriter', () => {
  it('separates blocks by one blank line, keeps list items together, and ends with one newline', () => {
    const md = new MarkdownWriter(1000, 'TEST');
    md.heading(2, 'Title\nwrapped');
    md.paragraph('First');
    md.item(0, 'a');
    md.item(1, 'b', 1);
    md.item(0, '# c');
    md.paragraph('');
    md.paragraph('Last  ');
    expect(md.toString()).toBe('## Title wrapped\n\nFirst\n\n- a\n  1. b\n- \\# c\n\nLast\n');
  });

  it('writes pipe tables with a header, escaped pipes, padded rows, and empty columns and rows dropped', () => {
    const md = new MarkdownWriter(1000, 'TEST');
    md.table([
      ['A', 'B|C', '', ''],
      ['', '', '', ''],
      ['1', '', '2'],
    ]);
    md.table([
      ['', 'Berth', '', 'Ships'],
      ['', 'A1', '', '42'],
    ]);
    expect(md.toString()).toBe('| A | B\\|C | |\n| --- | --- | --- |\n| 1 | | 2 |\n\n| Berth | Ships |\n| --- | --- |\n| A1 | 42 |\n');
  });

  it('quotes notes and fences code longer than any backtick run inside', () => {
    const md = new MarkdownWriter(1000, 'TEST');
    md.quote('Notes:', ['first', '# second']);
    md.code('a ``` b\n\n\n\nc   ');
    expect(md.toString()).toBe('> Notes: first\n>\n> \\# second\n\n````\na ``` b\n\nc\n````\n');
  });

  it('fails past the output limit, naming it', () => {
    const md = new MarkdownWriter(10, 'TEST');
    md.paragraph('short');
    expect(() => md.paragraph('much too long now')).toThrow(/the TEST file's Markdown runs past the limit of 10 characters/);
  });
});
