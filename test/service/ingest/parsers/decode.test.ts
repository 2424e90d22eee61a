import { describe, expect, it } from 'vitest';
import { READ_PIECE_BYTES } from '../../../../src/service/ingest/read-text.js';
import { parseContent, parseFailure, recordsOf } from '../test-support.js';
import type { Section } from '../../../../src/service/ingest/types.js';
import { csvParser } from '../../../../src/service/ingest/parsers/csv.js';
import { firstInvalidUtf8 } from '../../../../src/service/ingest/parsers/decode.js';
import { htmlParser } from '../../../../src/service/ingest/parsers/html.js';
import { jsonlParser } from '../../../../src/service/ingest/parsers/jsonl.js';
import { mdParser } from '../../../../src/service/ingest/parsers/md.js';
import { txtParser } from '../../../../src/service/ingest/parsers/txt.js';
import { xmlParser } from '../../../../src/service/ingest/parsers/xml.js';

const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');
const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? ascii(p) : Buffer.from(p))));
const allText = (sections: Section[]): string => sections.map((s) => ('text' in s ? s.text : s.records.join('\n'))).join('\n');

/** "Привет" in windows-1251: А..я are 0xC0..0xFF. */
const PRIVET_1251 = [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2];

describe('XML in the encoding its declaration names', () => {
  it.each([
    ['windows-1251', PRIVET_1251, 'Привет'],
    ['Shift_JIS', [0x93, 0xfa, 0x96, 0x7b], '日本'],
    ['ISO-8859-1', [0x63, 0x61, 0x66, 0xe9], 'café'],
    ['EUC-KR', [0xc7, 0xd1, 0xb1, 0xb9], '한국'],
    ['GBK', [0xd6, 0xd0, 0xce, 0xc4], '中文'],
  ])('%s', async (encoding, text, expected) => {
    const xml = bytes(`<?xml version="1.0" encoding="${encoding}"?>\n<note><body>`, text, '</body></note>');

    const sections = await parseContent(xmlParser, 'note.xml', xml);

    expect(recordsOf(sections)).toEqual([`body: ${expected}`]);
    expect(allText(sections)).not.toContain('\uFFFD');
  });

  it('lets a byte order mark win over the declaration', async () => {
    const xml = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('<?xml version="1.0" encoding="windows-1251"?><a><b>Привет</b></a>'),
    ]);

    expect(recordsOf(await parseContent(xmlParser, 'a.xml', xml))).toEqual(['b: Привет']);
  });

  it('fails undeclared bytes that are not UTF-8, saying how to declare them', async () => {
    const xml = bytes('<?xml version="1.0"?>\n<a><b>', PRIVET_1251, '</b></a>');

    expect(await parseFailure(parseContent(xmlParser, 'a.xml', xml))).toBe(
      'not valid UTF-8 (byte offset 28); save the file as UTF-8 (or name its encoding in the XML declaration, as in <?xml version="1.0" encoding="windows-1251"?>) and upload it again',
    );
  });

  it('fails a file that declares UTF-8 but is not', async () => {
    const xml = bytes('<?xml version="1.0" encoding="UTF-8"?><a>', PRIVET_1251, '</a>');

    expect(await parseFailure(parseContent(xmlParser, 'a.xml', xml))).toBe(
      'not valid UTF-8 (byte offset 41), the encoding its XML declaration declares; save the file as UTF-8 and upload it again',
    );
  });

  it('fails an encoding kbsync cannot decode, naming it', async () => {
    const xml = bytes('<?xml version="1.0" encoding="x-klingon"?><a>b</a>');

    expect(await parseFailure(parseContent(xmlParser, 'a.xml', xml))).toBe(
      'its XML declaration names the encoding "x-klingon", which kbsync cannot decode; save the file as UTF-8 and upload it again',
    );
  });

  it('fails bytes invalid in the declared multi-byte encoding', async () => {
    const xml = bytes('<?xml version="1.0" encoding="Shift_JIS"?><a>', [0x93, 0xfa, 0x96], '</a>');

    expect(await parseFailure(parseContent(xmlParser, 'a.xml', xml))).toMatch(
      /^not valid Shift_JIS, the encoding its XML declaration declares \(near byte offset 4\d\); correct the declaration or save the file as UTF-8/,
    );
  });
});

describe('HTML in the charset its head declares', () => {
  it.each([
    ['<meta charset>', '<meta charset="windows-1251">'],
    ['http-equiv', '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'],
    ['an unquoted charset', '<meta charset=windows-1251>'],
  ])('%s', async (_label, meta) => {
    const html = bytes(`<html><head>${meta}<title>t</title></head><body><p>`, PRIVET_1251, '</p></body></html>');

    expect(allText(await parseContent(htmlParser, 'a.html', html))).toBe('Привет');
  });

  it('ignores a charset named in a comment', async () => {
    const html = bytes('<html><head><!-- <meta charset="windows-1251"> --></head><body><p>', PRIVET_1251, '</p></body></html>');

    expect(await parseFailure(parseContent(htmlParser, 'a.html', html))).toMatch(
      /^not valid UTF-8 \(byte offset \d+\); save the file as UTF-8 \(or declare its encoding with <meta charset="\.\.\."> in its head\)/,
    );
  });
});

describe('text types: UTF-8, or UTF-16 with a byte order mark; anything else fails', () => {
  it.each([
    ['a.txt', txtParser],
    ['a.md', mdParser],
    ['a.csv', csvParser],
    ['a.jsonl', jsonlParser],
  ])('%s with windows-1251 bytes fails naming the offset', async (name, parser) => {
    expect(await parseFailure(parseContent(parser, name, bytes('ok\n', PRIVET_1251, '\n')))).toBe(
      'not valid UTF-8 (byte offset 3); save the file as UTF-8 and upload it again',
    );
  });

  it('reads UTF-16BE and UTF-8 with their byte order marks', async () => {
    const be = Buffer.from('Привет\n', 'utf16le').swap16();

    expect(allText(await parseContent(txtParser, 'a.txt', Buffer.concat([Buffer.from([0xfe, 0xff]), be])))).toBe('Привет');
    expect(allText(await parseContent(txtParser, 'a.txt', Buffer.from('\uFEFFПривет\n')))).toBe('Привет');
  });

  it('names the right offset when the bad byte is pieces into the file, after a character split between pieces', async () => {
    // 'é' (2 bytes) straddles the first piece's end; the bad byte comes in the third piece.
    const head = Buffer.alloc(READ_PIECE_BYTES - 1, 'a');
    const middle = Buffer.alloc(READ_PIECE_BYTES, 'b');
    const file = Buffer.concat([head, Buffer.from('é'), middle, Buffer.from([0x41, 0xff, 0x0a])]);

    expect(await parseFailure(parseContent(txtParser, 'a.txt', file))).toBe(
      `not valid UTF-8 (byte offset ${2 * READ_PIECE_BYTES + 2}); save the file as UTF-8 and upload it again`,
    );
  });

  it('fails a character cut off by the end of the file', async () => {
    expect(await parseFailure(parseContent(txtParser, 'a.txt', Buffer.from([0x61, 0xe2, 0x82])))).toBe(
      'not valid UTF-8 (byte offset 1); save the file as UTF-8 and upload it again',
    );
  });
});

describe('firstInvalidUtf8', () => {
  it.each([
    ['an overlong encoding', [0x61, 0xc0, 0xaf], 1],
    ['a surrogate', [0x61, 0x62, 0xed, 0xa0, 0x80], 2],
    ['past U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 0],
    ['a lone continuation byte', [0x80], 0],
    ['valid text', [0xe2, 0x82, 0xac], 3],
  ])('%s', (_label, input, offset) => {
    expect(firstInvalidUtf8(Uint8Array.from(input), 0)).toBe(offset);
  });
});
