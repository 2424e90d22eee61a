import { open } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Compressors, FileMetaData } from 'hyparquet';
import { isKbsyncError } from '../../../shared/errors.js';
import { MIB } from '../../../shared/plans.js';
import { parseFailed } from '../parse-error.js';
import { sizeText } from '../size-text.js';
import type { Parser, Section } from '../types.js';
import { createRecordBatcher } from './records.js';
import { parquetValueText } from './parquet-values.js';

/** Limits on what one Parquet file may make kbsync hold at once. */
export type ParquetLimits = {
  /** Largest footer (the Thrift-encoded metadata), read whole. */
  maxMetadataBytes: number;
  /** Largest row group, uncompressed, as its metadata declares it: a row group is read whole. */
  maxRowGroupBytes: number;
  /** Largest page, uncompressed, as its header declares it: checked before the page is decompressed. */
  maxPageBytes: number;
};

export const DEFAULT_PARQUET_LIMITS: ParquetLimits = {
  maxMetadataBytes: 16 * MIB,
  maxRowGroupBytes: 256 * MIB,
  maxPageBytes: 64 * MIB,
};

/** A schema nested deeper than this fails the file (hyparquet builds and walks the schema tree recursively). */
const MAX_PARQUET_SCHEMA_DEPTH = 64;

/** How deep the schema's groups nest, from its flat list of elements (`num_children`), without recursion. */
function schemaDepth(metadata: FileMetaData): number {
  const open: number[] = [];
  let deepest = 0;
  for (const element of metadata.schema) {
    while (open.length > 0 && open.at(-1) === 0) open.pop();
    if (open.length > 0) open[open.length - 1] = (open.at(-1) as number) - 1;
    const children = element.num_children ?? 0;
    if (children > 0) {
      open.push(children);
      deepest = Math.max(deepest, open.length);
    }
  }
  return deepest;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The footer's length, from the file's last 8 bytes (`<length> PAR1`), checked before hyparquet reads it. */
async function footerLength(path: string): Promise<number> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const tail = Buffer.alloc(8);
    if (size < 12) throw parseFailed(`not a Parquet file: it is ${size} bytes long, too short for a Parquet header and footer`);
    await handle.read(tail, 0, 8, size - 8);
    if (tail.toString('latin1', 4) !== 'PAR1') {
      throw parseFailed('not a Parquet file: it does not end with the "PAR1" magic (is it truncated, or another format?)');
    }
    return tail.readUInt32LE(0);
  } finally {
    await handle.close();
  }
}

/** The decompressors of hyparquet-compressors, each refusing a page whose header declares more than `maxBytes`. */
async function boundedCompressors(maxBytes: number): Promise<Compressors> {
  const { compressors, decompressZstd } = await import('hyparquet-compressors');
  const bounded: Compressors = {};
  const check = (codec: string, length: number): void => {
    if (length > maxBytes) {
      throw parseFailed(
        `a ${codec} page declares ${sizeText(length)} uncompressed, over the ${sizeText(maxBytes)} limit for one page; refused as a possible decompression bomb`,
      );
    }
  };
  for (const [codec, decompress] of Object.entries(compressors)) {
    if (decompress === undefined) continue;
    bounded[codec as keyof Compressors] = (input: Uint8Array, length: number) => {
      check(codec, length);
      // zstd would otherwise size its output from the data itself: it gets exactly the declared size.
      return codec === 'ZSTD' ? decompressZstd(input, new Uint8Array(length)) : decompress(input, length);
    };
  }
  return bounded;
}

async function* parseParquet(path: string, limits: ParquetLimits): AsyncGenerator<Section> {
  const metadataBytes = await footerLength(path);
  if (metadataBytes > limits.maxMetadataBytes) {
    throw parseFailed(
      `the Parquet footer declares ${sizeText(metadataBytes)} of metadata, over the ${sizeText(limits.maxMetadataBytes)} limit; write the data in several files (fewer row groups or columns each)`,
    );
  }
  const { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } = await import('hyparquet');
  const file = await asyncBufferFromFile(path);
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (err) {
    throw parseFailed(
      `not a readable Parquet file: its metadata (the footer) is damaged (${messageOf(err)}); write the file again and upload that copy`,
      err,
    );
  }
  const depth = schemaDepth(metadata);
  if (depth > MAX_PARQUET_SCHEMA_DEPTH) {
    throw parseFailed(
      `the Parquet schema nests columns ${depth} levels deep, over kbsync's limit of ${MAX_PARQUET_SCHEMA_DEPTH}; write the data with a flatter schema and upload it again`,
    );
  }
  const compressors = await boundedCompressors(limits.maxPageBytes);
  const batcher = createRecordBatcher();
  let rowStart = 0;
  for (const [index, group] of metadata.row_groups.entries()) {
    const rows = Number(group.num_rows);
    const bytes = Number(group.total_byte_size);
    const rowEnd = rowStart + rows;
    const where = `row group ${index + 1} of ${metadata.row_groups.length} (rows ${rowStart + 1}-${rowEnd})`;
    if (bytes > limits.maxRowGroupBytes) {
      throw parseFailed(
        `${where} is ${sizeText(bytes)} uncompressed, over the ${sizeText(limits.maxRowGroupBytes)} limit for one row group; write the file with smaller row groups`,
      );
    }
    let objects: Record<string, unknown>[];
    try {
      // One row group at a time: memory holds one group's rows, never the whole file's.
      objects = await parquetReadObjects({ file, metadata, compressors, rowStart, rowEnd, utf8: true });
    } catch (err) {
      if (isKbsyncError(err)) throw err;
      throw parseFailed(`could not read ${where}: the data is damaged (${messageOf(err)}); write the file again and upload that copy`, err);
    }
    for (const [i, row] of objects.entries()) {
      const parts: string[] = [];
      for (const [column, value] of Object.entries(row)) {
        const text = parquetValueText(value);
        if (text !== undefined && text.trim() !== '') parts.push(`${column}: ${text.trim()}`);
      }
      const section = parts.length === 0 ? undefined : batcher.add(parts.join('; '), rowStart + i + 1);
      if (section) yield section;
    }
    rowStart = rowEnd;
    await nextTurn();
  }
  const last = batcher.end();
  if (last) yield last;
}

/**
 * Parquet (hyparquet with hyparquet-compressors: snappy, gzip, zstd, lz4, brotli), read one row
 * group at a time: each row is a `column: value; ...` record, nested values written readably
 * (`[1,2]`, `{key:value}`), nulls left out as CSV's empty fields are. Byte arrays without a string
 * annotation are read as UTF-8 text.
 */
export const parquetParser: Parser = {
  extensions: ['parquet'],
  parse: (path) => parseParquet(path, DEFAULT_PARQUET_LIMITS),
};

/** A Parquet parser with other limits (tests). */
export function parquetParserWith(limits: ParquetLimits): Parser {
  return { extensions: ['parquet'], parse: (path) => parseParquet(path, limits) };
}
