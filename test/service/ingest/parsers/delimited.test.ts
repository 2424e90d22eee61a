import { describe, expect, it } from 'vitest';
import { parseContent, parseFailure, recordsOf } from '../test-support.js';
import { columnNames, renderRow } from '../../../../src/service/ingest/parsers/delimited.js';
import { csvParser } from '../../../../src/service/ingest/parsers/csv.js';
import { tsvParser } from '../../../../src/service/ingest/parsers/tsv.js';

describe('csv parser', () => {
  it('renders each row as col: value pairs named by the header', async () => {
    const csv = 'name,city,zip\nAda,London,01234\nLinus,"Helsinki, FI",00100\n';

    const records = recordsOf(await parseContent(csvParser, 'a.csv', csv));

    expect(records).toEqual(['name: Ada; city: London; zip: 01234', 'name: Linus; city: Helsinki, FI; zip: 00100']);
  });

  it.each([
    ['UTF-8 BOM', '\uFEFFa,b\n1,2\n'],
    ['CRLF line ends', 'a,b\r\n1,2\r\n'],
    ['no trailing newline', 'a,b\n1,2'],
    ['blank lines', 'a,b\n\n1,2\n\n'],
  ])('reads %s', async (_label, csv) => {
    expect(recordsOf(await parseContent(csvParser, 'a.csv', csv))).toEqual(['a: 1; b: 2']);
  });

  it('decodes a UTF-16LE file with its byte order mark', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a,b\nx,ʤ\n', 'utf16le')]);

    expect(recordsOf(await parseContent(csvParser, 'a.csv', utf16))).toEqual(['a: x; b: ʤ']);
  });

  it.each([
    ['an empty file', ''],
    ['a header only', 'a,b,c\n'],
    ['rows with only empty fields', 'a,b\n,\n , \n'],
  ])('yields no records for %s', async (_label, csv) => {
    expect(recordsOf(await parseContent(csvParser, 'a.csv', csv))).toEqual([]);
  });

  it('names extra fields, leaves out missing and empty ones, and renames blank or repeated headers', async () => {
    const csv = 'id,,id\n1,x,2,extra\n3\n';

    const records = recordsOf(await parseContent(csvParser, 'a.csv', csv));

    expect(records).toEqual(['id: 1; column 2: x; id (2): 2; column 4: extra', 'id: 3']);
  });

  it('fails an unclosed quote naming the line where its record starts', async () => {
    const csv = 'a,b\n1,2\n3,"never closed\n4,5\n6,7\n';

    const message = await parseFailure(parseContent(csvParser, 'bad.csv', csv));

    expect(message).toBe('invalid CSV: line 3: a quoted field is never closed (the file ends inside it); fix the file and upload it again');
  });

  it.each([
    ['a stray quote inside an unquoted field', 'size,name\n5",screen\n', 'size: 5"; name: screen'],
    ['text after a closing quote', 'size,name\n"5"in,screen\n', 'size: "5"in; name: screen'],
  ])('keeps %s as text (lenient, as spreadsheets write them)', async (_label, csv, record) => {
    expect(recordsOf(await parseContent(csvParser, 'a.csv', csv))).toEqual([record]);
  });

  it('streams many rows in several sections, the later ones marked as continuing', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `${i},value number ${i} with some padding text`).join('\n');

    const sections = await parseContent(csvParser, 'big.csv', `n,text\n${rows}\n`);

    expect(sections.length).toBeGreaterThan(1);
    expect(sections.slice(1).every((s) => s.continues === true)).toBe(true);
    expect(recordsOf(sections)).toHaveLength(3000);
    expect(recordsOf(sections)[2999]).toBe('n: 2999; text: value number 2999 with some padding text');
  });
});

describe('tsv parser', () => {
  it('splits on tabs, not commas', async () => {
    const tsv = 'name\tnote\nAda\tlikes commas, a lot\n';

    expect(recordsOf(await parseContent(tsvParser, 'a.tsv', tsv))).toEqual(['name: Ada; note: likes commas, a lot']);
  });

  it('fails an unclosed quote as TSV', async () => {
    expect(await parseFailure(parseContent(tsvParser, 'a.tsv', 'a\tb\n"open\tx\n'))).toMatch(/^invalid TSV: line 2: /);
  });
});

describe('leading comment lines', () => {
  it('skips them in a CSV, keeping # lines after the header as data', async () => {
    const csv = '# exported 2025-01-01\n#\n# columns: name, city\n\nname,city\nAda,London\n#hashtag,Paris\n';

    expect(recordsOf(await parseContent(csvParser, 'a.csv', csv))).toEqual(['name: Ada; city: London', 'name: #hashtag; city: Paris']);
  });

  it('takes the last comment of a TSV as its header when it has tabs (zone1970.tab)', async () => {
    const tab = [
      '# tzdb timezone descriptions',
      '#',
      "# Lines beginning with '#' are comments.",
      '#country-',
      '#codes\tcoordinates\tTZ\tcomments',
      'AD\t+4230+00131\tEurope/Andorra',
      'AE,OM\t+2518+05518\tAsia/Dubai\tCrozet',
    ].join('\r\n');

    expect(recordsOf(await parseContent(tsvParser, 'zone1970.tsv', tab))).toEqual([
      'codes: AD; coordinates: +4230+00131; TZ: Europe/Andorra',
      'codes: AE,OM; coordinates: +2518+05518; TZ: Asia/Dubai; comments: Crozet',
    ]);
  });

  it('skips them in a TSV whose header is not commented', async () => {
    expect(recordsOf(await parseContent(tsvParser, 'a.tsv', '# a comment\ncode\tname\nAD\tAndorra\n'))).toEqual([
      'code: AD; name: Andorra',
    ]);
  });

  it('keeps a header whose first column is named "#"', async () => {
    expect(recordsOf(await parseContent(csvParser, 'a.csv', '#,name\n1,Ada\n'))).toEqual(['#: 1; name: Ada']);
  });

  it('counts them in the line an error names', async () => {
    const csv = '# one\n# two\na,b\n1,2\n3,"never closed\n4,5\n';

    expect(await parseFailure(parseContent(csvParser, 'bad.csv', csv))).toBe(
      'invalid CSV: line 5: a quoted field is never closed (the file ends inside it); fix the file and upload it again',
    );
  });

  it('yields nothing for a file of comments only', async () => {
    expect(await parseContent(tsvParser, 'a.tsv', '# only\n# comments')).toEqual([]);
  });
});

describe('columnNames / renderRow', () => {
  it('trims names and values', () => {
    expect(renderRow(columnNames([' a ', 'b']), [' 1 ', ''])).toBe('a: 1');
  });
});
