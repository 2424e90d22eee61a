import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../../src/service/ingest/chunker.js';
import { parserFor } from '../../../../src/service/ingest/registry.js';
import { parseFailure } from '../test-support.js';
import type { Section } from '../../../../src/service/ingest/types.js';

// Every sample of test/fixtures/real/ and every "Must extract" string its README lists, read through
// the registry's parser and the chunker (what the service indexes); the corrupt samples and the
// decisions the README leaves open (comments, too_small.xls, the encrypted workbook) after them.
const FIXTURES = fileURLToPath(new URL('../../../fixtures/real/', import.meta.url));

type Check = { file: string; mustExtract: string[]; exactlyOnce?: string[]; absent?: string[]; inOrder?: boolean; records?: number };

async function chunksOf(file: string): Promise<{ sections: Section[]; chunks: string[] }> {
  const parser = parserFor(file);
  if (parser === undefined) throw new Error(`no parser for ${file}`);
  const sections: Section[] = [];
  for await (const s of parser.parse(FIXTURES + file)) sections.push(s);
  return { sections, chunks: chunkDocument({ sections }) };
}

const CHECKS: Check[] = [
  // parquet/
  {
    file: 'parquet/alltypes_plain.snappy.parquet',
    mustExtract: ['date_string_col: 04/01/09', 'timestamp_col', 'id: 6;', 'id: 7;'],
    records: 2,
  },
  { file: 'parquet/alltypes_dictionary.parquet', mustExtract: ['01/01/09', 'string_col'] },
  { file: 'parquet/nulls.snappy.parquet', mustExtract: ['b_c_int'], absent: ['undefined'], records: 8 },
  { file: 'parquet/nested_lists.snappy.parquet', mustExtract: ['a: [[["a","b"],["c"]],[null,["d"]]]; b: 1', '"f"'], records: 3 },
  { file: 'parquet/list_columns.parquet', mustExtract: ['abc', 'efg', 'hij', 'xyz'] },
  { file: 'parquet/nested_maps.snappy.parquet', mustExtract: ['{a:', '{b:', '{c:', '{d:', '{e:', '{f:', '{3:true,4:false,5:true}'] },
  { file: 'parquet/datapage_v2.snappy.parquet', mustExtract: ['a: abc'], records: 5 },
  {
    file: 'parquet/delta_length_byte_array.parquet',
    mustExtract: ['FRUIT: apple_banana_mango0', 'FRUIT: apple_banana_mango998001'],
    records: 1000,
  },
  { file: 'parquet/concatenated_gzip_members.parquet', mustExtract: ['long_col: 1', 'long_col: 513'], records: 513 },
  { file: 'parquet/lz4_raw_compressed.parquet', mustExtract: ['abc', 'def', '42.125'] },
  // docx/
  { file: 'docx/tables.docx', mustExtract: ['Above', 'Top left', 'Bottom right', 'Below'], inOrder: true },
  { file: 'docx/simple-list.docx', mustExtract: ['Apple', 'Banana'] },
  { file: 'docx/footnotes.docx', mustExtract: ['Ouch', 'A tachyon walks into a bar.', 'Fin.'] },
  { file: 'docx/endnotes.docx', mustExtract: ['Ouch', 'A tachyon walks into a bar.', 'Fin.'] },
  { file: 'docx/text-box.docx', mustExtract: ['Datum plane'], exactlyOnce: ['Datum plane'] },
  { file: 'docx/strict-format.docx', mustExtract: ['Test'] },
  { file: 'docx/utf8-bom.docx', mustExtract: ['This XML has a byte order mark.'] },
  { file: 'docx/par-known-paragraphs.docx', mustExtract: ['Heading Paragraph\nNormal paragraph'] },
  { file: 'docx/par-known-styles.docx', mustExtract: ['no specified style', 'missing style', 'Heading 1', 'Body Text'] },
  {
    file: 'docx/blk-paras-and-tables.docx',
    mustExtract: ['Lorem ipsum dolor sit amet', 'Text before', 'Between', 'Text after', 'Donec semper facilisis metus finibus malesuada.'],
    inOrder: true,
  },
  {
    file: 'docx/par-hyperlinks.docx',
    mustExtract: ['One awesome hyperlink.', 'Three hyperlinks: the first one here, the second one, and the third.'],
  },
  { file: 'docx/hdr-header-footer.docx', mustExtract: ['section with header', 'Header for section-1', 'Footer for section 1'] },
  { file: 'docx/doc-odd-even-hdrs.docx', mustExtract: ['First Page.', 'Second Page.', 'Odd page header.', 'Even page header.'] },
  // Decision: comments are review notes, not the document: not indexed.
  { file: 'docx/comments.docx', mustExtract: ['Ouch.'], absent: ['A tachyon walks into a bar.'] },
  {
    file: 'docx/comments-rich-para.docx',
    mustExtract: ['Some text worthy of note.', 'Paragraph 7'],
    absent: ['Paragraph with Heading 2 paragraph style.'],
  },
  // xlsx/
  { file: 'xlsx/table-multiple.xlsx', mustExtract: ['Banana', 'Orange', 'Sheet1\n', 'Sheet2\n', 'Sheet3\n', 'Type: Banana'] },
  {
    file: 'xlsx/any_sheets.xlsx',
    mustExtract: ['This workbook contains 4 sheets: Visible, Hidden, VeryHidden and Chart', 'sheets: Visible, Hidden, VeryHidden, Chart'],
  },
  { file: 'xlsx/merged_range.xlsx', mustExtract: ['A1', 'H1', 'E3', 'G4'] },
  { file: 'xlsx/richtext-namespaced.xlsx', mustExtract: ['shared string', 'inline string', 'Line 3'] },
  { file: 'xlsx/inlineStr_cdata.xlsx', mustExtract: ['Hello CDATA', 'World', 'NormalText'] },
  { file: 'xlsx/date.xlsx', mustExtract: ['2021-01-01', '2021-01-02', '255:10:10', '15', '16', '17'] },
  { file: 'xlsx/strict_iso_paths.xlsx', mustExtract: ['150-031260-001_B', 'GoldenRun', 'Thickness'] },
  { file: 'xlsx/has_x000D_.xlsx', mustExtract: ['ABC\r\nDEF'], absent: ['_x000D_'] },
  { file: 'xlsx/issues.xlsx', mustExtract: ['àâéêèçöïî«»', '☺', "aaa ' aaa", 'spc_chrs\n'] },
  // xls/
  { file: 'xls/any_sheets.xls', mustExtract: ['This workbook contains 4 sheets: Visible, Hidden, VeryHidden and Chart'] },
  {
    file: 'xls/merge_cells.xls',
    mustExtract: ['Row Merge', 'Column Merge', 'Chunk Merged', 'Not Merged', 'columns: Row Merge, B, Not Merged'],
  },
  { file: 'xls/merged_range.xls', mustExtract: ['A1', 'H1', 'E3', 'G4'] },
  {
    file: 'xls/sst_continue.xls',
    mustExtract: [
      'This is a long string with a serial number at the end 0001',
      'This is a long string with a serial number at the end 0134',
      'New CONTINUE block',
    ],
  },
  { file: 'xls/biff5-rich-text-string.xls', mustExtract: ['ELECTORAL DIVISION OF SOMERSET EAST', 'Cape Police', 'Jacobus Petrus'] },
  { file: 'xls/issues.xls', mustExtract: ['ab', 'test', 'datatypes\n', 'issue2\n'] },
  { file: 'xls/date.xls', mustExtract: ['2021-01-01', '2021-01-02', '255:10:10', '15', '16', '17'] },
  // csv/
  { file: 'csv/comma_in_quotes.csv', mustExtract: ['Anytown, WW', '08123'] },
  { file: 'csv/escaped_quotes.csv', mustExtract: ['ha "ha" ha'] },
  { file: 'csv/quotes_and_newlines.csv', mustExtract: ['ha \n"ha" \nha'] },
  { file: 'csv/json.csv', mustExtract: ['{"type": "Point", "coordinates": [102.0, 0.5]}'] },
  { file: 'csv/utf8.csv', mustExtract: ['ʤ'] },
];

const EMPTY = ['docx/empty.docx', 'xlsx/empty_sheet.xlsx'];

const CORRUPT: [string, RegExp][] = [
  ['parquet/corrupt/PARQUET-1481.parquet', /^not a readable Parquet file: its metadata \(the footer\) is damaged/],
  ['parquet/corrupt/nation.dict-malformed.parquet', /^could not read row group 1 of 1 \(rows 1-25\): the data is damaged/],
  ['docx/corrupt/empty-zip.docx', /^not a valid DOCX file: the archive has no main document part \(word\/document\.xml\)/],
  ['docx/corrupt/tables.truncated.docx', /^not a valid DOCX file: the ZIP archive is truncated or damaged/],
  // Decision: an encrypted workbook is refused as such, not as a corrupt ZIP.
  ['xlsx/corrupt/pass_protected.xlsx', /^the XLSX file is password-protected \(encrypted\)/],
  ['xlsx/corrupt/table-multiple.truncated.xlsx', /^not a valid XLSX file: the ZIP archive is truncated or damaged/],
  // Decision: a text stub named .xls is not read as a one-cell sheet.
  [
    'xls/corrupt/too_small.xls',
    /^not an Excel 97-2003 workbook \(\.xls\): it holds text \("Attachment f:\\attachcus\\arnold-j\\Summer trading shots\.xls no\.\.\."\); if it is a table saved as text, rename it \.csv or \.txt$/,
  ],
  ['xls/corrupt/any_sheets.truncated.xls', /^the XLS workbook could not be read: the file is damaged or truncated/],
];

describe('real-world samples (test/fixtures/real)', () => {
  it.each(CHECKS.map((c) => [c.file, c] as const))('%s yields every string it must', async (_file, check) => {
    const { sections, chunks } = await chunksOf(check.file);
    const all = chunks.join('\n\n');

    for (const value of check.mustExtract)
      expect(
        chunks.some((c) => c.includes(value)),
        value,
      ).toBe(true);
    for (const value of check.exactlyOnce ?? []) expect(all.split(value).length - 1, value).toBe(1);
    for (const value of check.absent ?? []) expect(all, value).not.toContain(value);
    if (check.inOrder === true) {
      const at = check.mustExtract.map((v) => all.indexOf(v));
      expect(at).toEqual([...at].sort((a, b) => a - b));
    }
    if (check.records !== undefined) expect(sections.flatMap((s) => ('records' in s ? s.records : [])).length).toBe(check.records);
  });

  it.each(EMPTY)('%s succeeds with no chunks', async (file) => {
    expect((await chunksOf(file)).chunks).toEqual([]);
  });

  it.each(CORRUPT)('%s fails with a clear error', async (file, error) => {
    expect(await parseFailure(chunksOf(file))).toMatch(error);
  });

  it('covers every sample in the folder', async () => {
    const { readdirSync } = await import('node:fs');
    const listed = new Set([...CHECKS.map((c) => c.file), ...EMPTY, ...CORRUPT.map(([f]) => f)]);
    const onDisk = readdirSync(FIXTURES, { recursive: true, encoding: 'utf8' }).filter((f) => /\.[a-z]+$/.test(f) && !f.endsWith('.md'));

    expect(onDisk.filter((f) => !listed.has(f))).toEqual([]);
  });
});
