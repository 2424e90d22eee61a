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
import { parseFailed } from './parse-error.js';
import type { Parser, Section } from './types.js';

/**
 * The parse of `parser` with one more guard: a stack overflow is input nested past what a library
 * recurses through (the depth pre-scans, depth.ts, should have refused it first), so it fails the
 * file as `parse_failed`, never as a fault of the service that a retry could fix.
 */
export function guarded(parser: Parser): Parser {
  async function* parse(path: string, options?: Parameters<Parser['parse']>[1]): AsyncGenerator<Section> {
    try {
      yield* parser.parse(path, options);
    } catch (err) {
      if (err instanceof RangeError && /call stack/i.test(err.message)) {
        throw parseFailed(
          'the file is nested too deeply to read (the parser ran out of stack); flatten its structure and upload it again',
          err,
        );
      }
      throw err;
    }
  }
  return { extensions: parser.extensions, parse };
}

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
].map(guarded);

const BY_EXTENSION = new Map(PARSERS.flatMap((p) => p.extensions.map((ext) => [ext, p] as const)));

/** The parser for a file name's extension (case-insensitive), or undefined when there is none yet. */
export function parserFor(fileName: string): Parser | undefined {
  return BY_EXTENSION.get(extensionOf(fileName));
}
