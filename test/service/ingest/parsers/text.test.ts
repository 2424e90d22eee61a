import { describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../../src/shared/errors.js';
import { chunkDocument, chunkSections } from '../../../../src/service/ingest/chunker.js';
import { SECTION_CUT_CHARS } from '../../../../src/service/ingest/line-sections.js';
import { parseContent, parseFailure, tempFile } from '../test-support.js';
import type { Section } from '../../../../src/service/ingest/types.js';
import { mdParser } from '../../../../src/service/ingest/parsers/md.js';
import { txtParser } from '../../../../src/service/ingest/parsers/txt.js';

const texts = (sections: Section[]): string[] => sections.map((s) => ('text' in s ? s.text : `[records] ${s.records.join(' | ')}`));

describe('txt parser', () => {
  it('keeps paragraphs, dropping a BOM and normalising CRLF and CR line ends', async () => {
    const sections = await parseContent(txtParser, 'a.txt', '\uFEFFFirst line\r\nsame paragraph\r\n\r\nSecond\rpara\n');

    expect(sections).toEqual([{ text: 'First line\nsame paragraph\n\nSecond\npara' }]);
  });

  it('treats # lines as text, not headings', async () => {
    expect(texts(await parseContent(txtParser, 'a.txt', '# not a heading\nbody\n'))).toEqual(['# not a heading\nbody']);
  });

  it.each([
    ['empty', ''],
    ['blank lines only', '\n\n  \n'],
  ])('yields nothing for an %s file', async (_label, content) => {
    expect(await parseContent(txtParser, 'a.txt', content)).toEqual([]);
  });

  it('fails a binary file with a NUL byte', async () => {
    const err = await parseContent(txtParser, 'a.txt', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00])).catch((e: unknown) => e);

    expect(isKbsyncError(err, 'parse_failed')).toBe(true);
    expect((err as Error).message).toBe(
      'not a text file: NUL character at offset 4 (binary data, or UTF-16 without a byte order mark); upload text saved as UTF-8 (or UTF-16 with a byte order mark)',
    );
  });

  it('fails bytes that are not UTF-8 naming their offset, instead of storing U+FFFD', async () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]);

    expect(await parseFailure(parseContent(txtParser, 'a.txt', latin1))).toBe(
      'not valid UTF-8 (byte offset 3); save the file as UTF-8 and upload it again',
    );
  });

  it('cuts a long text into continuing sections at paragraph breaks', async () => {
    const paragraph = 'word '.repeat(200).trim();
    const content = Array.from({ length: 200 }, () => paragraph).join('\n\n');

    const sections = await parseContent(txtParser, 'big.txt', content);

    expect(sections.length).toBeGreaterThan(1);
    expect(sections.slice(1).every((s) => s.continues === true)).toBe(true);
    expect(texts(sections).join('\n\n')).toBe(content);
  });
});

describe('very long paragraphs', () => {
  it.each([
    ['txt', txtParser, { maxChars: 1500, overlapChars: 200 }],
    ['md', mdParser, { maxChars: 1500, overlapChars: 200 }],
    ['txt, a chunk larger than a cut section', txtParser, { maxChars: SECTION_CUT_CHARS * 2, overlapChars: 200 }],
  ])('cuts one between lines into bounded sections (%s) that chunk exactly like the whole', async (_label, parser, options) => {
    const lines = Array.from(
      { length: 12_000 },
      (_, i) => `${i % 9 === 0 ? '   ' : ''}Line ${i} of a paragraph that never ends. It goes on.`,
    );
    const text = `# Intro\nFirst paragraph.\n\n${lines.join('\n')}\n\nLast paragraph.`;
    const sections = await parseContent(parser, 'a.txt', text);
    const f = tempFile('a.txt', text);
    try {
      const streamed: string[] = [];
      for await (const c of chunkSections(parser.parse(f.path), options)) streamed.push(c);
      const whole = chunkDocument(
        { sections: [{ ...(parser === mdParser ? { heading: 'Intro' } : {}), text: parser === mdParser ? text.slice(8) : text }] },
        options,
      );

      expect(text.length).toBeGreaterThan(2 * SECTION_CUT_CHARS);
      expect(sections.filter((s) => 'text' in s && s.openParagraph === true).length).toBeGreaterThan(1);
      for (const s of sections) expect('text' in s && s.text.length).toBeLessThanOrEqual(SECTION_CUT_CHARS + 100);
      expect(streamed).toEqual(whole);
    } finally {
      f.cleanup();
    }
  });
});

describe('md parser', () => {
  it('starts a section at each heading, with the heading path', async () => {
    const md = [
      'Intro text.',
      '# Guide',
      'Guide text.',
      '## Install',
      'Run it.',
      '### Linux',
      'apt.',
      '## Use',
      'Use it.',
      '# Other',
      'More.',
    ].join('\n');

    const sections = await parseContent(mdParser, 'a.md', md);

    expect(sections).toEqual([
      { text: 'Intro text.' },
      { heading: 'Guide', text: 'Guide text.' },
      { heading: 'Guide > Install', text: 'Run it.' },
      { heading: 'Guide > Install > Linux', text: 'apt.' },
      { heading: 'Guide > Use', text: 'Use it.' },
      { heading: 'Other', text: 'More.' },
    ]);
  });

  it('reads setext headings and closing hashes', async () => {
    const md = 'Title\n=====\nbody\n\nPart two\n--------\nmore\n## Third ##\nend';

    const sections = await parseContent(mdParser, 'a.md', md);

    expect(sections.map((s) => s.heading)).toEqual(['Title', 'Title > Part two', 'Title > Third']);
  });

  it('never reads headings inside fenced code', async () => {
    const md = '# Code\n```sh\n# a comment\n\n## not a heading\n```\nafter';

    const sections = await parseContent(mdParser, 'a.md', md);

    expect(sections).toEqual([{ heading: 'Code', text: '```sh\n# a comment\n\n## not a heading\n```\nafter' }]);
  });

  it('keeps a heading with no body of its own when nothing nests under it', async () => {
    const sections = await parseContent(mdParser, 'a.md', '# A\n## B\n# C\ntext');

    expect(sections).toEqual([
      { heading: 'A > B', text: '' },
      { heading: 'C', text: 'text' },
    ]);
  });

  it('turns YAML front matter into one key: value record, not body text', async () => {
    const md = '---\ntitle: Release notes\ntags: [alpha, beta]\n---\n# Notes\nBody.';

    const sections = await parseContent(mdParser, 'a.md', md);

    expect(sections).toEqual([{ records: ['title: Release notes\ntags[0]: alpha\ntags[1]: beta'] }, { heading: 'Notes', text: 'Body.' }]);
  });

  it('keeps front matter that is not valid YAML as ordinary text', async () => {
    const md = '---\ntitle: [unclosed\n---\n\nBody.';

    const sections = await parseContent(mdParser, 'a.md', md);

    expect(texts(sections).join('\n')).toContain('title: [unclosed');
    expect(texts(sections).join('\n')).toContain('Body.');
  });

  it('treats a --- rule that is not at the top as text', async () => {
    const sections = await parseContent(mdParser, 'a.md', 'Intro\n\n---\n\nAfter');

    expect(sections).toEqual([{ text: 'Intro\n\n---\n\nAfter' }]);
  });
});
