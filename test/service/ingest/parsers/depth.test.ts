import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { guarded } from '../../../../src/service/ingest/registry.js';
import { parseContent, parseFailure, recordsOf } from '../test-support.js';
import type { Parser } from '../../../../src/service/ingest/types.js';
import { MAX_JSON_DEPTH, jsonDepthOver, scanXmlPart } from '../../../../src/service/ingest/parsers/depth.js';
import { docxParser } from '../../../../src/service/ingest/parsers/docx.js';
import { jsonParser } from '../../../../src/service/ingest/parsers/json.js';
import { jsonlParser } from '../../../../src/service/ingest/parsers/jsonl.js';
import { deflated, docxOf, paragraph, zipOf } from '../../../../src/service/ingest/parsers/office-files.test-util.js';
import { parquetParser } from '../../../../src/service/ingest/parsers/parquet.js';
import { xlsxParser } from '../../../../src/service/ingest/parsers/xlsx.js';

// Input nested past what a library recurses through (JSON.stringify, mammoth, hyparquet) fails as
// parse_failed naming the limit: never as a stack overflow the service would call internal.

const arrays = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const objects = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('JSON and JSONL nesting', () => {
  it.each([10_000, 100_000])('a JSON document %i arrays deep fails naming the limit and where', async (depth) => {
    expect(await parseFailure(parseContent(jsonParser, 'deep.json', arrays(depth)))).toBe(
      "line 1, column 513: JSON arrays and objects nested more than 512 deep, over kbsync's limit; flatten the data (or store the deep part as a string) and upload it again",
    );
  });

  it.each([10_000, 100_000])('a JSONL line %i objects deep fails naming its line', async (depth) => {
    expect(await parseFailure(parseContent(jsonlParser, 'deep.jsonl', `{"ok":1}\n${objects(depth)}\n`))).toMatch(
      /^line 2, column 2561: JSON arrays and objects nested more than 512 deep/,
    );
  });

  it('reads a document exactly at the limit (the part past the flattening depth as compact JSON)', async () => {
    const records = recordsOf(await parseContent(jsonParser, 'deep.json', `[${objects(MAX_JSON_DEPTH - 1)}]`));

    expect(records).toHaveLength(1);
    expect(records[0]).toMatch(/^(a\.){63}a: \{"a":/);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthOver(`["${'['.repeat(600)}\\"${'{'.repeat(600)}"]`, 2)).toBeUndefined();
    expect(jsonDepthOver('[[["x"]]]', 2)).toBe(2);
  });
});

describe('Office parts', () => {
  it.each([10_000, 100_000])('a DOCX with tables nested %i deep fails naming the part and the limit', async (depth) => {
    const body = `${'<w:tbl><w:tr><w:tc>'.repeat(depth / 100)}${paragraph('deep')}${'</w:tc></w:tr></w:tbl>'.repeat(depth / 100)}`;
    const unknown = `${'<w:x>'.repeat(depth / 10)}${paragraph('deep')}${'</w:x>'.repeat(depth / 10)}`;

    for (const docx of [docxOf(body), docxOf(unknown)]) {
      expect(await parseFailure(parseContent(docxParser, 'a.docx', docx))).toBe(
        "the DOCX part word/document.xml nests XML elements more than 256 deep, over kbsync's limit; simplify the document (fewer nested tables or content controls) and upload it again",
      );
    }
  });

  it('reads a DOCX with tables nested 20 deep', async () => {
    const body = `${'<w:tbl><w:tr><w:tc>'.repeat(20)}${paragraph('deep inside')}${'</w:tc></w:tr></w:tbl>'.repeat(20)}`;

    const sections = await parseContent(docxParser, 'a.docx', docxOf(body));

    expect(JSON.stringify(sections)).toContain('deep inside');
  });

  it('an XLSX sheet nested 10,000 deep fails naming the part', async () => {
    const sheet = `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${'<x>'.repeat(10_000)}${'</x>'.repeat(10_000)}</worksheet>`;
    const xlsx = zipOf([deflated('[Content_Types].xml', '<Types/>'), deflated('xl/worksheets/sheet1.xml', sheet)]);

    expect(await parseFailure(parseContent(xlsxParser, 'a.xlsx', xlsx))).toMatch(
      /^the XLSX part xl\/worksheets\/sheet1\.xml nests XML elements more than 256 deep, over kbsync's limit/,
    );
  });

  it('scanXmlPart skips comments, CDATA, processing instructions, self-closing tags and quoted ">"', () => {
    const xml = Buffer.from('<?xml version="1.0"?><a x=">"><!-- <b><b> --><![CDATA[<c><c>]]><d/><e></e></a>');

    expect(scanXmlPart(xml, 2)).toEqual({});
    expect(scanXmlPart(Buffer.from('<a><b><c/></b></a>'), 1)).toEqual({ depthOverAt: 3 });
    expect(scanXmlPart(Buffer.from('<?xml version="1.0"?><!doctype a><a/>'), 5)).toEqual({ doctypeAt: 21 });
  });
});

describe('Parquet schema nesting', () => {
  const nestedParquet = (groups: number): Buffer => {
    const schema: { name: string; num_children?: number; repetition_type?: 'OPTIONAL'; type?: 'INT32' }[] = [
      { name: 'root', num_children: 1 },
    ];
    for (let i = 0; i < groups; i++) schema.push({ name: `g${i}`, repetition_type: 'OPTIONAL', num_children: 1 });
    schema.push({ name: 'leaf', type: 'INT32', repetition_type: 'OPTIONAL' });
    let value: Record<string, unknown> = { leaf: 5 };
    for (let i = groups - 1; i > 0; i--) value = { [`g${i}`]: value };
    return Buffer.from(parquetWriteBuffer({ columnData: [{ name: 'g0', data: [value, null] }], schema }));
  };

  it('fails a schema nested past the limit, naming it', async () => {
    expect(await parseFailure(parseContent(parquetParser, 'a.parquet', nestedParquet(70)))).toBe(
      "the Parquet schema nests columns 71 levels deep, over kbsync's limit of 64; write the data with a flatter schema and upload it again",
    );
  });

  it('reads a schema at the limit', async () => {
    expect(recordsOf(await parseContent(parquetParser, 'a.parquet', nestedParquet(63)))).toHaveLength(1);
  });
});

describe('the registry guard', () => {
  it('turns a stack overflow in a parser into parse_failed', async () => {
    const recurse = (n: number): number => (n === 0 ? 0 : 1 + recurse(n - 1));
    const overflowing: Parser = {
      extensions: ['txt'],
      async *parse() {
        recurse(Number.MAX_SAFE_INTEGER);
      },
    };

    expect(await parseFailure(parseContent(guarded(overflowing), 'a.txt', 'x'))).toBe(
      'the file is nested too deeply to read (the parser ran out of stack); flatten its structure and upload it again',
    );
  });
});
