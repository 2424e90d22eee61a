import { extensionOf } from '../../shared/file-types.js';
import { csvParser } from './parsers/csv.js';
import { jsonParser } from './parsers/json.js';
import { jsonlParser } from './parsers/jsonl.js';
import { mdParser } from './parsers/md.js';
import { tsvParser } from './parsers/tsv.js';
import { txtParser } from './parsers/txt.js';
import type { Parser } from './types.js';

/** Every parser; a new format is one new module and one entry here. */
export const PARSERS: readonly Parser[] = [txtParser, mdParser, csvParser, tsvParser, jsonParser, jsonlParser];

const BY_EXTENSION = new Map(PARSERS.flatMap((p) => p.extensions.map((ext) => [ext, p] as const)));

/** The parser for a file name's extension (case-insensitive), or undefined when there is none yet. */
export function parserFor(fileName: string): Parser | undefined {
  return BY_EXTENSION.get(extensionOf(fileName));
}
