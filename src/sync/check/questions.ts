import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import * as z from 'zod';
import { formatPath, formatProblem, type ConfigPath, type ConfigProblem } from '../../config/errors.js';
import { KbsyncError } from '../../shared/errors.js';

/** The service's limit on `top_k` (docs/api.md). */
export const MAX_TOP_K = 20;

/**
 * One knowledge check: a question, and what must come back for it: source paths as `kbsync plan`
 * prints them (`path`, or `source/path` with several sources), or `id:N` for a knowledge-source id
 * (an intelligence entry, or a file, by the service's id).
 */
export type KnowledgeCheck = {
  question: string;
  expect: string[];
  /** How many results to ask for; null: the command's --top-k. */
  topK: number | null;
  /** The line of the check in its file (for messages). */
  line: number;
};

const CheckItem = z.strictObject({
  question: z.string({ error: 'a question (text) is required' }).trim().min(1, 'a question (text) is required'),
  // One path may be written alone (`expect: a.md`), as a list of one.
  expect: z.preprocess(
    (v) => (typeof v === 'string' ? [v] : v),
    z
      .array(z.string({ error: 'a source path (text), or id:N' }).trim().min(1, 'an empty path'), {
        error: 'a source path, or a list of source paths, is required',
      })
      .min(1, 'a list of at least one source path is required'),
  ),
  topK: z
    .number({ error: `a whole number from 1 to ${MAX_TOP_K}` })
    .int(`a whole number from 1 to ${MAX_TOP_K}`)
    .min(1, `a whole number from 1 to ${MAX_TOP_K}`)
    .max(MAX_TOP_K, `a whole number from 1 to ${MAX_TOP_K} (the service's limit)`)
    .optional(),
});
const Checks = z.array(CheckItem, { error: 'the file must be a YAML list of {question, expect: [path, ...], topK?}' }).min(1, 'no checks');

/**
 * Reads a checks file: a YAML list of `{question, expect: [path, ...], topK?}`. Every problem is
 * reported at once, as `FILE:LINE: [index].field: message` (a usage error, exit 2).
 */
export function loadChecks(path: string): KnowledgeCheck[] {
  const file = basename(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'error';
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : `cannot read it (${code})`;
    throw new KbsyncError('usage', `--questions ${path}: ${why}`, { cause: err });
  }
  return parseChecks(text, file);
}

/** parseChecks of a file's text; `file` names it in messages. */
export function parseChecks(text: string, file: string): KnowledgeCheck[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // An error "at the end" (an unclosed bracket) points one past the last line: show the last line.
    const lastLine = Math.max(1, text.replace(/\n$/, '').split('\n').length);
    fail(
      file,
      doc.errors.map((e) => ({
        path: '',
        line: Math.min(e.linePos?.[0].line ?? 1, lastLine),
        message: `YAML syntax: ${(e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`,
      })),
    );
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  const lineOf = (at: ConfigPath): number => lineOfPath(doc, at, (offset) => lineCounter.linePos(offset).line);
  const parsed = Checks.safeParse(data ?? []);
  if (!parsed.success) {
    fail(
      file,
      parsed.error.issues.map((issue) => {
        const at = issue.path.map((seg) => (typeof seg === 'number' ? seg : String(seg)));
        const message =
          issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')} (known: question, expect, topK)` : issue.message;
        return { path: formatPath(at), line: lineOf(at), message };
      }),
    );
  }
  return parsed.data.map((c, i) => ({ question: c.question, expect: c.expect, topK: c.topK ?? null, line: lineOf([i]) }));
}

function fail(file: string, problems: ConfigProblem[]): never {
  const noun = problems.length === 1 ? 'problem' : 'problems';
  throw new KbsyncError('usage', `${problems.length} ${noun} in ${file}:\n${problems.map((p) => formatProblem(file, p)).join('\n')}`);
}

/** The line of the node at `at`, or of its nearest existing parent. */
function lineOfPath(doc: Document, at: ConfigPath, lineAt: (offset: number) => number): number {
  for (let n = at.length; n >= 0; n--) {
    const node: unknown = n === 0 ? doc.contents : doc.getIn(at.slice(0, n), true);
    const range = typeof node === 'object' && node !== null ? (node as { range?: unknown }).range : undefined;
    if (Array.isArray(range) && typeof range[0] === 'number') return lineAt(range[0]);
  }
  return 1;
}
