import { extensionOf } from '../../shared/file-types.js';
import { csvParser } from './parsers/csv.js';
import { docxParser } from './parsers/docx.js';
import { htmlParser } from './parsers/html.js';
import { jsonParser } from './parsers/json.js';
import { jsonlParser } from './parsers/jsonl.js';
import { mdParser } from './parsers/md.js';
import { parquetParser } from './parsers/parquet.js';
import { tsvParser } from './parsers/tsv.js';
import { txtParser } from './parsers/txt.js';
import { xlsParser } from './parsers/xls.js';
import { xlsxParser } from './parsers/xlsx.js';
import { xmlParser } from './parsers/xml.js';
import type { Parser } from './types.js';

/** Every parser; a new format is one new module and one entry here. */
export const PARSERS: readonly Parser[] = [
  txtParser,
  mdParser,
  csvParser,
  tsvParser,
  jsonParser,
  jsonlParser,
  docxParser,
  htmlParser,
  xmlParser,
  xlsxParser,
  xlsParser,
  parquetParser,
];

const BY_EXTENSION = new Map(PARSERS.flatMap((p) => p.extensions.map((ext) => [ext, p] as const)));

/** The parser for a file name's extension (case-insensitive), or undefined when there is none yet. */
export function parserFor(fileName: string): Parser | undefined {
  return BY_EXTENSION.get(extensionOf(fileName));
}
