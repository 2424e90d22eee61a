import * as XLSX from '@e965/xlsx';
import { describe, expect, it } from 'vitest';
import { MIB } from '../../../../src/shared/plans.js';
import { chunkDocument } from '../../../../src/service/ingest/chunker.js';
import { DEFAULT_ZIP_LIMITS } from '../../../../src/service/ingest/office-zip.js';
import { parseContent, parseFailure } from '../test-support.js';
import type { Section } from '../../../../src/service/ingest/types.js';
import { xlsParser } from '../../../../src/service/ingest/parsers/xls.js';
import { xlsxParser, xlsxParserWith } from '../../../../src/service/ingest/parsers/xlsx.js';

type Sheets = Record<string, unknown[][]>;

function workbook(sheets: Sheets, bookType: 'xlsx' | 'biff8' | 'biff5'): Buffer {
  const wb = XLSX.utils.book_new();
  for (const [name, rows] of Object.entries(sheets)) XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), name);
  return XLSX.write(wb, { type: 'buffer', bookType, compression: true }) as Buffer;
}

const SHEETS: Sheets = {
  Staff: [['Name', 'City', 'Started'], ['Åsa', 'Zürich', 2021], ['李雷', '北京', 2023], [], ['Ola 🙂', '', 2024]],
  Numbers: [
    [1, 2.5, true],
    [3, 4, false],
  ],
  Empty: [],
};

const FORMATS = [
  ['xlsx', xlsxParser, 'xlsx'],
  ['xls', xlsParser, 'biff8'],
] as const;

describe.each(FORMATS)('%s parser', (ext, parser, bookType) => {
  const parse = (data: Buffer | string): Promise<Section[]> => parseContent(parser, `book.${ext}`, data);

  it('reads every sheet under its name, the header naming the columns, Unicode kept', async () => {
    const chunks = chunkDocument({ sections: await parse(workbook(SHEETS, bookType)) });

    expect(chunks).toEqual([
      'sheets: Staff, Numbers, Empty',
      'Staff\ncolumns: Name, City, Started\nName: Åsa; City: Zürich; Started: 2021\nName: 李雷; City: 北京; Started: 2023\nName: Ola 🙂; Started: 2024',
      'Numbers\nA: 1; B: 2.5; C: TRUE\nA: 3; B: 4; C: FALSE',
    ]);
  });

  it('succeeds with no chunks for a workbook of one empty sheet', async () => {
    expect(await parse(workbook({ Sheet1: [] }, bookType))).toEqual([]);
  });

  it('reads a single row of text as data, not as a header', async () => {
    expect(chunkDocument({ sections: await parse(workbook({ Only: [['just', 'one row']] }, bookType)) })).toEqual([
      'Only\nA: just; B: one row',
    ]);
  });
});

describe('xlsx parser: huge cells, hostile and broken files', () => {
  // (SheetJS writes BIFF8 cells of at most 255 characters, so this one is XLSX only.)
  it('keeps a 26,000-character cell, split only where it must be', async () => {
    const words = Array.from({ length: 3000 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkDocument({
      sections: await parseContent(xlsxParser, 'notes.xlsx', workbook({ Notes: [['Note'], [words]] }, 'xlsx')),
    });

    expect(chunks.every((c) => c.startsWith('Notes\n') && c.length <= 1500)).toBe(true);
    expect(chunks.join(' ')).toContain('word0 ');
    expect(chunks.join(' ')).toContain('word2999');
  });

  it('refuses a workbook whose sheets declare more than the limit', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => [i, `row ${i} of a sheet that is long`]);
    const parser = xlsxParserWith({ ...DEFAULT_ZIP_LIMITS, maxPartBytes: 256 * 1024 });

    const message = await parseFailure(parseContent(parser, 'big.xlsx', workbook({ Data: rows }, 'xlsx')));

    expect(message).toMatch(
      /^the XLSX part xl\/worksheets\/sheet1\.xml declares \d+\.\d MiB uncompressed, over the 256\.0 KiB limit for one part/,
    );
  });

  it('fails a ZIP that is not a workbook', async () => {
    const zip = XLSX.CFB.write(XLSX.CFB.utils.cfb_new(), { fileType: 'zip', type: 'buffer' }) as Buffer;
    const message = await parseFailure(parseContent(xlsxParser, 'book.xlsx', zip));

    expect(message).toMatch(/^not a valid XLSX workbook \(.+\); open it in Excel or LibreOffice and save it again$/);
  });
});

describe('xls parser on files that are not Excel 97-2003 workbooks', () => {
  it.each([
    ['an XLSX named .xls', () => workbook({ S: [['a']] }, 'xlsx'), 'it is a ZIP archive (an XLSX workbook named .xls?); rename it .xlsx'],
    [
      'an HTML table named .xls',
      () => Buffer.from('<table><tr><td>a</td></tr></table>'),
      'it holds HTML or XML, which Excel also opens; save it from Excel as .xlsx, or rename it .html or .xml',
    ],
    ['an empty file', () => Buffer.alloc(0), 'the file is empty'],
  ])('refuses %s', async (_label, make, why) => {
    expect(await parseFailure(parseContent(xlsParser, 'book.xls', make()))).toBe(`not an Excel 97-2003 workbook (.xls): ${why}`);
  });

  it('reads an Excel 5 (BIFF5) workbook', async () => {
    expect(
      chunkDocument({ sections: await parseContent(xlsParser, 'old.xls', workbook({ Old: [['Town'], ['Graaff-Reinet']] }, 'biff5')) }),
    ).toEqual(['Old\ncolumns: Town\nTown: Graaff-Reinet']);
  });

  it('refuses a file over the whole-file limit before reading it', async () => {
    const message = await parseFailure(parseContent(xlsParser, 'big.xls', Buffer.alloc(2 * MIB), { maxWholeFileBytes: MIB }));

    expect(message).toBe('XLS file is 2.0 MiB, over the 1 MiB limit for an Excel 97-2003 workbook; save it as .xlsx or split it');
  });
});

describe('header detection', () => {
  it('takes a first row of long texts like the rows below it for data', async () => {
    const rows = [1, 2, 3].map((n) => [`This is a long string with a serial number at the end 000${n}`]);

    expect(chunkDocument({ sections: await parseContent(xlsxParser, 'serials.xlsx', workbook({ S: rows }, 'xlsx')) })).toEqual([
      'S\nA: This is a long string with a serial number at the end 0001\nA: This is a long string with a serial number at the end 0002\nA: This is a long string with a serial number at the end 0003',
    ]);
  });

  it('takes short distinct texts over text rows for a header', async () => {
    const rows = [
      ['Town', 'Province'],
      ['Graaff-Reinet', 'Eastern Cape'],
    ];

    expect(chunkDocument({ sections: await parseContent(xlsxParser, 'towns.xlsx', workbook({ S: rows }, 'xlsx')) })).toEqual([
      'S\ncolumns: Town, Province\nTown: Graaff-Reinet; Province: Eastern Cape',
    ]);
  });
});
