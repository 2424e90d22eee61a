import { flattenJson } from '../flatten.js';
import { parseFailed } from '../parse-error.js';
import { readLineBatches } from '../read-text.js';
import type { Parser, Section } from '../types.js';
import { describeJsonError, jsonDepthProblem } from './json-error.js';
import { createRecordBatcher } from './records.js';

async function* parseJsonl(path: string): AsyncGenerator<Section> {
  const batcher = createRecordBatcher();
  for await (const { lines, firstLineNo } of readLineBatches(path)) {
    const out: Section[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const tooDeep = jsonDepthProblem(line);
      if (tooDeep !== undefined) throw parseFailed(tooDeep.replace(/^line 1,/, `line ${firstLineNo + i},`));
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        const where = describeJsonError(err, line)
          .replace(/^line 1, column (\d+)/, 'column $1')
          .replace(/^line 1: /, '');
        throw parseFailed(`line ${firstLineNo + i}: invalid JSON: ${where}; fix the line and upload the file again`, err);
      }
      const section = batcher.add(flattenJson(value).join('\n'), firstLineNo + i);
      if (section) out.push(section);
    });
    yield* out;
  }
  const last = batcher.end();
  if (last) yield last;
}

/** JSON Lines, streamed: one record per non-blank line; a bad line fails the file naming that line. */
export const jsonlParser: Parser = {
  extensions: ['jsonl'],
  parse: (path) => parseJsonl(path),
};
