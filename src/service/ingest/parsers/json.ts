import { stat } from 'node:fs/promises';
import { MIB } from '../../../shared/plans.js';
import { jsonRecords } from '../flatten.js';
import { parseFailed } from '../parse-error.js';
import { readText } from '../read-text.js';
import type { Parser, Section } from '../types.js';
import { describeJsonError, jsonDepthProblem } from './json-error.js';
import { createRecordBatcher } from './records.js';

/** JSON needs the whole document in memory; larger files fail with a clear error instead of exhausting it. */
export const DEFAULT_MAX_WHOLE_FILE_BYTES = 32 * MIB;

async function* parseJson(path: string, maxBytes: number): AsyncGenerator<Section> {
  const { size } = await stat(path);
  if (size > maxBytes) {
    throw parseFailed(
      `JSON file is ${(size / MIB).toFixed(1)} MiB, over the ${(maxBytes / MIB).toFixed(0)} MiB limit for a whole JSON document; split it or use JSONL (one record per line)`,
    );
  }
  let text = '';
  for await (const piece of readText(path)) text += piece;
  if (text.trim() === '') return;
  const tooDeep = jsonDepthProblem(text);
  if (tooDeep !== undefined) throw parseFailed(tooDeep);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw parseFailed(`invalid JSON: ${describeJsonError(err, text)}; fix it and upload the file again`, err);
  }
  const batcher = createRecordBatcher();
  for (const record of jsonRecords(value)) {
    const section = batcher.add(record);
    if (section) yield section;
  }
  const last = batcher.end();
  if (last) yield last;
}

/**
 * JSON: objects flattened to `a.b[0].c: value` lines; each element of a top-level array (or of a
 * top-level key's array of objects) is one record, so a chunk never cuts a record in two.
 */
export const jsonParser: Parser = {
  extensions: ['json'],
  parse: (path, options) => parseJson(path, options?.maxWholeFileBytes ?? DEFAULT_MAX_WHOLE_FILE_BYTES),
};
