import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { parseContent, parseFailure, recordsOf } from '../test-support.js';
import type { Section } from '../../../../src/service/ingest/types.js';
import { DEFAULT_PARQUET_LIMITS, parquetParser, parquetParserWith } from '../../../../src/service/ingest/parsers/parquet.js';
import { parquetValueText } from '../../../../src/service/ingest/parsers/parquet-values.js';

type WriteOptions = Parameters<typeof parquetWriteBuffer>[0];
const parquet = (options: WriteOptions): Buffer => Buffer.from(parquetWriteBuffer(options));
const parse = (data: Buffer | string, parser = parquetParser): Promise<Section[]> => parseContent(parser, 'table.parquet', data);

describe('parquet parser', () => {
  it('renders nulls, lists and structs readably, with the column names in every record', async () => {
    const data = parquet({
      columnData: [
        { name: 'id', data: [1, 2, 3] },
        { name: 'city', data: ['Zürich', null, '北京 🙂'] },
        { name: 'tags', data: [['a', 'b'], null, ['c', null]] },
        { name: 'place', data: [{ lat: 47.4, name: 'HQ' }, null, { lat: null, name: 'Lab' }] },
      ],
      schema: [
        { name: 'root', num_children: 4 },
        { name: 'id', type: 'INT32', repetition_type: 'REQUIRED' },
        { name: 'city', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'tags', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'place', repetition_type: 'OPTIONAL', num_children: 2 },
        { name: 'lat', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
        { name: 'name', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      ],
    });

    expect(recordsOf(await parse(data))).toEqual([
      'id: 1; city: Zürich; tags: ["a","b"]; place: {lat:47.4,name:"HQ"}',
      'id: 2',
      'id: 3; city: 北京 🙂; tags: ["c",null]; place: {lat:null,name:"Lab"}',
    ]);
  });

  it('reads every row group, in order', async () => {
    const ids = Array.from({ length: 2500 }, (_, i) => i);
    const data = parquet({ columnData: [{ name: 'n', data: ids, type: 'INT32' }], rowGroupSize: 1000 });

    const records = recordsOf(await parse(data));

    expect(records).toHaveLength(2500);
    expect(records[0]).toBe('n: 0');
    expect(records.at(-1)).toBe('n: 2499');
  });

  it('succeeds with no records for a file of zero rows', async () => {
    const data = parquet({ columnData: [{ name: 'n', data: [], type: 'INT32' }] });

    expect(recordsOf(await parse(data))).toEqual([]);
  });

  it('refuses a row group over the limit before reading it', async () => {
    const data = parquet({
      columnData: [{ name: 'text', data: Array.from({ length: 5000 }, (_, i) => `row ${i} `.repeat(20)), type: 'STRING' }],
      codec: 'UNCOMPRESSED',
    });
    const parser = parquetParserWith({ ...DEFAULT_PARQUET_LIMITS, maxRowGroupBytes: 64 * 1024 });

    expect(await parseFailure(parse(data, parser))).toMatch(
      /^row group 1 of 2 \(rows 1-1000\) is \d+\.\d KiB uncompressed, over the 64\.0 KiB limit for one row group; write the file with smaller row groups$/,
    );
  });

  it('refuses a compressed page that declares more than the limit, before decompressing it', async () => {
    const data = parquet({
      columnData: [{ name: 'text', data: Array.from({ length: 1000 }, (_, i) => `text ${i} `.repeat(50)), type: 'STRING' }],
      codec: 'SNAPPY',
    });
    const parser = parquetParserWith({ ...DEFAULT_PARQUET_LIMITS, maxPageBytes: 1024 });

    expect(await parseFailure(parse(data, parser))).toMatch(
      /^a SNAPPY page declares \d+\.\d KiB uncompressed, over the 1\.0 KiB limit for one page; refused as a possible decompression bomb$/,
    );
  });

  it.each([
    ['a text file', 'id,name\n1,Ann\n', 'not a Parquet file: it does not end with the "PAR1" magic (is it truncated, or another format?)'],
    ['an empty file', '', 'not a Parquet file: it is 0 bytes long, too short for a Parquet header and footer'],
  ])('fails %s', async (_label, content, error) => {
    expect(await parseFailure(parse(content))).toBe(error);
  });

  it('fails a truncated file', async () => {
    const data = parquet({ columnData: [{ name: 'n', data: [1, 2, 3], type: 'INT32' }] });

    expect(await parseFailure(parse(data.subarray(0, data.length - 20)))).toMatch(
      /^not a Parquet file: it does not end with the "PAR1" magic/,
    );
  });
});

describe('parquetValueText', () => {
  it.each([
    [null, undefined],
    ['plain', 'plain'],
    [12n, '12'],
    [new Date('2024-05-01T10:00:00Z'), '2024-05-01T10:00:00.000Z'],
    [new Uint8Array([1, 2, 3]), '(3 bytes of binary data)'],
    [
      [
        [['a', 'b'], ['c']],
        [null, ['d']],
      ],
      '[[["a","b"],["c"]],[null,["d"]]]',
    ],
    [{ 3: true, 'two words': 'x' }, '{3:true,"two words":"x"}'],
  ])('value %# is written as %s', (value, text) => {
    expect(parquetValueText(value)).toBe(text);
  });
});
