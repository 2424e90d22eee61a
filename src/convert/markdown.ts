import { failed } from './failure.js';

/** Whitespace runs (line breaks and tabs included) become one space; control characters go. */
export function inlineText(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000e-\u001f\u007f\ufffe\uffff]/g, '')
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
}

/** Line starts that Markdown would read as structure: a heading, a list, a quote, a fence, a table rule. */
const LINE_START = /^(#|[-+*]\s|[-+*]$|>|```|~~~|={3,}|-{3,}|\|)/;
/** An ordered-list marker: its punctuation is what gets the backslash (`12\. text`). */
const ORDERED = /^(\d{1,9})([.)])(\s|$)/;

/** Text as one Markdown line that reads as the text it is (structure at its start escaped with a backslash). */
export function escapeLine(text: string): string {
  const line = inlineText(text);
  if (ORDERED.test(line)) return line.replace(ORDERED, '$1\\$2$3');
  return LINE_START.test(line) ? `\\${line}` : line;
}

const cellText = (text: string): string => inlineText(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|');

/**
 * Builds a document's Markdown block by block, within `maxChars`: headings, paragraphs, list items
 * (consecutive items form one list), pipe tables, quotes and comments, one blank line between blocks.
 */
export class MarkdownWriter {
  private readonly blocks: string[] = [];
  private chars = 0;
  private lastWasItem = false;

  private readonly maxChars: number;
  private readonly format: string;

  constructor(maxChars: number, format: string) {
    this.maxChars = maxChars;
    this.format = format;
  }

  private push(block: string, item = false): void {
    if (block === '') return;
    const sep = this.blocks.length === 0 ? '' : item && this.lastWasItem ? '\n' : '\n\n';
    this.chars += sep.length + block.length;
    if (this.chars > this.maxChars) {
      throw failed(
        `the ${this.format} file's Markdown runs past the limit of ${this.maxChars} characters: split the document, or raise maxOutputChars`,
      );
    }
    this.blocks.push(sep + block);
    this.lastWasItem = item;
  }

  /** `#`..`######` by level (deeper levels are written as level 6). */
  heading(level: number, text: string): void {
    const line = inlineText(text);
    if (line === '') return;
    this.push(`${'#'.repeat(Math.min(6, Math.max(1, level)))} ${line}`);
  }

  paragraph(text: string): void {
    this.push(escapeLine(text));
  }

  /** A list item at `depth` (0 for the outermost list): `- ` or `N. `, two spaces a level. */
  item(depth: number, text: string, number?: number): void {
    const line = escapeLine(text);
    if (line === '') return;
    const marker = number === undefined ? '-' : `${number}.`;
    this.push(`${'  '.repeat(Math.max(0, depth))}${marker} ${line}`, true);
  }

  /** A pipe table: the first row is its header; rows are padded to one width, empty rows and columns dropped. */
  table(rows: string[][]): void {
    const kept = rows.map((r) => r.map(cellText)).filter((r) => r.some((c) => c !== ''));
    const used: number[] = [];
    for (const r of kept) r.forEach((c, i) => c !== '' && (used[i] = i));
    const columns = used.filter((i) => i !== undefined);
    if (columns.length === 0) return;
    const line = (r: string[]): string => `|${columns.map((i) => (r[i] ? ` ${r[i]} |` : ' |')).join('')}`;
    const out = [line(kept[0] as string[]), `|${' --- |'.repeat(columns.length)}`, ...kept.slice(1).map(line)];
    this.push(out.join('\n'));
  }

  /** A quote whose first line starts with `label` (`> Notes: ...`); each paragraph a quoted line. */
  quote(label: string, paragraphs: string[]): void {
    const lines = paragraphs.map(inlineText).filter((p) => p !== '');
    if (lines.length === 0) return;
    this.push(lines.map((p, i) => (i === 0 ? `> ${label} ${p}` : `> ${escapeLine(p)}`)).join('\n>\n'));
  }

  /** Preformatted text as a fenced block, its lines kept (the fence longer than any run of backticks inside). */
  code(text: string): void {
    const lines = text
      .replace(/\r\n?/g, '\n')
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
      .split('\n')
      .map((l) => l.replace(/\s+$/, ''));
    while (lines.length > 0 && lines[0] === '') lines.shift();
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    if (lines.length === 0) return;
    const body = lines.join('\n').replace(/\n{3,}/g, '\n\n');
    const longest = (body.match(/`+/g) ?? []).reduce((m, r) => Math.max(m, r.length), 0);
    const fence = '`'.repeat(Math.max(3, longest + 1));
    this.push(`${fence}\n${body}\n${fence}`);
  }

  /** A line written as given (a heading the converter built, a page marker). */
  raw(line: string): void {
    this.push(line);
  }

  get empty(): boolean {
    return this.blocks.length === 0;
  }

  /** The Markdown: no trailing spaces, ending with one newline. */
  toString(): string {
    return `${this.blocks.join('').replace(/[ \t]+$/gm, '')}\n`;
  }
}
