import { parse as parseCsv } from 'csv-parse/sync';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { extensionOf } from '../../shared/file-types.js';

/** One intelligence entry read from a file: where it is, its text, and what goes with it. */
export type ParsedEntry = {
  /** The entry's place in its file, stable while the file's layout is ("3" for the third record, "deploys" for a section). */
  key: string;
  /** 1-based line of the file where the entry starts. */
  line: number;
  content: string;
  title?: string;
  metadata?: Record<string, unknown>;
};

/** A record kbsync could not turn into an entry: its line, the field, and what to do. */
export type EntryProblem = { line: number; field: string | null; message: string };

/** What one file gave: its entries and its problems (a bad record never hides the good ones). */
export type ParsedFile = { entries: ParsedEntry[]; problems: EntryProblem[] };

/** The extensions an intelligence source reads. */
export const INTELLIGENCE_EXTENSIONS: ReadonlySet<string> = new Set(['jsonl', 'json', 'yaml', 'yml', 'md', 'csv']);

/** True when an intelligence source reads this file (by its extension). */
export function isIntelligenceFile(path: string): boolean {
  return INTELLIGENCE_EXTENSIONS.has(extensionOf(path));
}

/**
 * Turns one file's text into entries, by its extension: JSONL (a record per line), JSON and YAML
 * (a list of records, or a mapping with an `entries` list; a YAML record may be a FAQ item
 * `{question, answer}`), CSV (a row per record, the first row naming the columns) and Markdown
 * (a section per heading). A record's text is its `contentField`; `title` and `metadata` go along.
 */
export function parseEntries(path: string, text: string, contentField: string): ParsedFile {
  const ext = extensionOf(path);
  if (ext === 'jsonl') return parseJsonl(text, contentField);
  if (ext === 'json') {
    // YAML reads JSON with positions, but more leniently (`{"a": }` is a null there): JSON.parse decides what is valid.
    try {
      JSON.parse(text);
    } catch (err) {
      const message = (err as Error).message;
      return { entries: [], problems: [{ line: jsonErrorLine(text, message), field: null, message: `not valid JSON: ${message}` }] };
    }
  }
  if (ext === 'json' || ext === 'yaml' || ext === 'yml') return parseYamlOrJson(text, contentField);
  if (ext === 'csv') return parseCsvRows(text, contentField);
  if (ext === 'md') return parseMarkdown(text);
  return { entries: [], problems: [{ line: 1, field: null, message: `.${ext} files are not read by an intelligence source` }] };
}

/**
 * The line of a JSON.parse error: from its position when V8 gives one, else from the excerpt it quotes
 * (`Unexpected token '}', ..."content": }\n]" is not valid JSON`), found in the text; 1 when neither.
 */
function jsonErrorLine(text: string, message: string): number {
  const lineOfOffset = (offset: number): number => text.slice(0, offset).split('\n').length;
  const position = /position (\d+)/.exec(message)?.[1];
  if (position !== undefined) return lineOfOffset(Number(position));
  const quoted = /, (\.\.\.)?"([\s\S]*)"(\.\.\.)? is not valid JSON$/.exec(message);
  if (quoted === null) return 1;
  const excerpt = quoted[2] as string;
  const at = text.indexOf(excerpt);
  return at === -1 ? 1 : lineOfOffset(at);
}

/** A record (a plain object) as an entry, or the problem with it. */
function recordEntry(record: unknown, key: string, line: number, contentField: string): ParsedEntry | EntryProblem {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    return { line, field: null, message: `record ${key}: not an object (each record is {"${contentField}": "...", ...})` };
  }
  const r = record as Record<string, unknown>;
  let content = r[contentField];
  let title = r['title'];
  // A FAQ item: the question is the title and opens the text.
  if (content === undefined && contentField === 'content' && typeof r['question'] === 'string' && typeof r['answer'] === 'string') {
    content = `${r['question'].trim()}\n\n${r['answer'].trim()}`;
    title ??= r['question'].trim();
  }
  if (content === undefined) {
    return {
      line,
      field: contentField,
      message: `record ${key}: no "${contentField}" field (set the source's contentField to the field holding the text, or give question and answer)`,
    };
  }
  if (typeof content !== 'string') return { line, field: contentField, message: `record ${key}: "${contentField}" is not a string` };
  if (content.trim() === '') return { line, field: contentField, message: `record ${key}: "${contentField}" is empty` };
  if (title !== undefined && title !== null && typeof title !== 'string') {
    return { line, field: 'title', message: `record ${key}: "title" is not a string` };
  }
  const metadata = r['metadata'];
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) {
    return { line, field: 'metadata', message: `record ${key}: "metadata" is not an object` };
  }
  const entry: ParsedEntry = { key, line, content };
  if (typeof title === 'string' && title.trim() !== '') entry.title = title.trim().slice(0, 1000);
  if (metadata !== undefined) entry.metadata = metadata as Record<string, unknown>;
  return entry;
}

function push(out: ParsedFile, r: ParsedEntry | EntryProblem): void {
  if ('content' in r) out.entries.push(r);
  else out.problems.push(r);
}

function parseJsonl(text: string, contentField: string): ParsedFile {
  const out: ParsedFile = { entries: [], problems: [] };
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (err) {
      out.problems.push({ line: i + 1, field: null, message: `not valid JSON: ${(err as Error).message}` });
      return;
    }
    push(out, recordEntry(record, String(i + 1), i + 1, contentField));
  });
  return out;
}

function parseYamlOrJson(text: string, contentField: string): ParsedFile {
  const out: ParsedFile = { entries: [], problems: [] };
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false });
  const lineOf = (offset: number | undefined): number => (offset === undefined ? 1 : lineCounter.linePos(offset).line);
  if (doc.errors.length > 0) {
    for (const e of doc.errors)
      out.problems.push({ line: e.linePos?.[0].line ?? 1, field: null, message: e.message.split('\n')[0] ?? e.message });
    return out;
  }
  let list: Node | null = doc.contents;
  if (isMap(list)) {
    // A mapping with an `entries` list holds the records; any other mapping is one record.
    const entries = list.get('entries', true);
    if (isSeq(entries)) list = entries;
    else {
      push(out, recordEntry(list.toJSON(), '1', lineOf(list.range?.[0]), contentField));
      return out;
    }
  }
  if (list === null || (isScalar(list) && list.value === null)) return out; // an empty file: no entry
  if (!isSeq(list)) {
    out.problems.push({
      line: lineOf(doc.contents?.range?.[0]),
      field: null,
      message: 'expected a list of records, a record, or a mapping with an "entries" list',
    });
    return out;
  }
  list.items.forEach((item, i) => {
    const node = item as Node | null;
    push(out, recordEntry(node?.toJSON(), String(i + 1), lineOf(node?.range?.[0]), contentField));
  });
  return out;
}

function parseCsvRows(text: string, contentField: string): ParsedFile {
  const out: ParsedFile = { entries: [], problems: [] };
  let rows: { record: Record<string, string>; info: { lines: number } }[];
  try {
    rows = parseCsv(text, { columns: true, skip_empty_lines: true, bom: true, info: true, relax_column_count: false }) as typeof rows;
  } catch (err) {
    const e = err as Error & { lines?: number };
    out.problems.push({ line: e.lines ?? 1, field: null, message: `not valid CSV: ${e.message}` });
    return out;
  }
  const header = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  if (rows.length > 0 && !(contentField in (rows[0] as (typeof rows)[number]).record)) {
    out.problems.push({
      line: 1,
      field: contentField,
      message: `no "${contentField}" column (the header is: ${header.trim()}); set the source's contentField to the column holding the text`,
    });
    return out;
  }
  rows.forEach(({ record, info }, i) => {
    const { [contentField]: content, title, ...rest } = record;
    const metadata = Object.keys(rest).length > 0 ? rest : undefined;
    push(out, recordEntry({ [contentField]: content, title, metadata }, String(i + 1), info.lines, contentField));
  });
  return out;
}

/** `## Title` (up to three spaces before, one to six `#`), its text without a closing run of `#`; null otherwise. */
function headingOf(line: string): string | null {
  const m = /^ {0,3}#{1,6}(?:[ \t]|$)/.exec(line);
  if (m === null) return null;
  let text = line.slice(m[0].length).trim();
  const closing = /[ \t]#+$/.exec(text);
  if (closing !== null) text = text.slice(0, closing.index).trim();
  else if (/^#+$/.test(text)) text = '';
  return text;
}

/** A section's key: its heading as a slug ("deploy-days"), numbered when the file repeats it. */
function slugOf(heading: string, seen: Map<string, number>): string {
  const base =
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '') || 'section';
  const n = (seen.get(base) ?? 0) + 1;
  seen.set(base, n);
  return n === 1 ? base : `${base}-${n}`;
}

function parseMarkdown(text: string): ParsedFile {
  const out: ParsedFile = { entries: [], problems: [] };
  const seen = new Map<string, number>();
  let current: { heading: string | null; line: number; body: string[] } = { heading: null, line: 1, body: [] };
  let fence: string | null = null;
  const flush = (): void => {
    const body = current.body.join('\n').trim();
    if (body === '') return; // a heading with nothing under it (or nothing before the first heading) is no entry
    const heading = current.heading;
    const content = heading === null ? body : `${heading}\n\n${body}`;
    const entry: ParsedEntry = { key: heading === null ? 'top' : slugOf(heading, seen), line: current.line, content };
    if (heading !== null && heading !== '') entry.title = heading.slice(0, 1000);
    out.entries.push(entry);
  };
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    const fenceMark = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fenceMark !== undefined) {
      if (fence === null) fence = fenceMark[0] as string;
      else if (fenceMark[0] === fence) fence = null;
    }
    const heading = fence === null && fenceMark === undefined ? headingOf(line) : null;
    if (heading === null) {
      current.body.push(line);
      return;
    }
    flush();
    current = { heading, line: i + 1, body: [] };
  });
  flush();
  return out;
}
