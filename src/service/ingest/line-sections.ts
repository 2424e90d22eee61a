import { parse as parseYaml } from 'yaml';
import { atxHeading } from './atx-heading.js';
import { flattenJson } from './flatten.js';
import { pushProse, type Section } from './types.js';

/** A section's text is handed on at the next paragraph break once it is this long (memory stays flat). */
export const SECTION_FLUSH_CHARS = 64 * 1024;
/**
 * With no paragraph break in sight (one huge paragraph, or a long fenced block) a section is cut
 * between two lines once it is this long; the cut is marked `openParagraph` so the chunker joins
 * the paragraph up again. Memory stays flat and no one step handles more than about this much text.
 * (One difference from reading the paragraph whole: a setext underline right after such a paragraph
 * makes a heading of its lines since the last cut only, not of all of it.)
 */
export const SECTION_CUT_CHARS = 4 * SECTION_FLUSH_CHARS;
const MAX_FRONT_MATTER_LINES = 500;

export type LineSectionOptions = {
  /** Markdown: ATX and setext headings start sections; fenced code is never read as headings (nor cut at a blank line unless very long). */
  markdown: boolean;
  /** A leading `---` … `---` YAML block is metadata: it becomes one `key: value` record, not body text. */
  frontMatter?: boolean;
  /** Put in front of every heading path (an intelligence entry's title). */
  title?: string;
};

export type LineSections = {
  /** Takes the next lines, appending the sections they complete to `out`. */
  pushLines(lines: readonly string[], out: Section[]): void;
  /** The sections still held, at the end of the text. */
  end(): Section[];
};

const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const NOT_PARAGRAPH = /^ {0,3}([-*+>|#]|\d+[.)])/;

function frontMatterSections(lines: string[]): Section[] | undefined {
  try {
    const data: unknown = parseYaml(lines.join('\n'));
    if (data === null || data === undefined) return [];
    if (typeof data !== 'object' || Array.isArray(data)) return undefined;
    return [{ records: [flattenJson(data).join('\n')] }];
  } catch {
    return undefined; // not YAML after all: kept as ordinary text
  }
}

/**
 * Turns lines of text into sections, a batch of lines at a time (for streaming parsers and in-memory
 * text alike). Headings are kept as section boundaries and as each section's heading path.
 */
/** The page marker a converted PDF's Markdown puts before each page's text. */
const PAGE_MARKER = /^<!-- page (\d+) -->$/;

export function createLineSections(options: LineSectionOptions): LineSections {
  const stack: { level: number; text: string }[] = [];
  let body: string[] = [];
  let bodyChars = 0;
  /** The body starts in the middle of a paragraph cut by SECTION_CUT_CHARS: its first line keeps its indent. */
  let bodyContinuesParagraph = false;
  let emittedUnderHeading = false;
  let fence: string | null = null;
  let frontMatter: 'start' | 'inside' | 'done' = options.frontMatter === true ? 'start' : 'done';
  let frontLines: string[] = [];
  /** The page a `<!-- page N -->` marker (a converted PDF's) last named: it ends the heading path. */
  let page: string | null = null;

  const headingPath = (): string | undefined => {
    const parts = [options.title, ...stack.map((h) => h.text)].filter((p): p is string => p !== undefined && p !== '');
    if (page !== null) return parts.length === 0 ? `page ${page}` : `${parts.join(' > ')} · page ${page}`;
    return parts.length === 0 ? undefined : parts.join(' > ');
  };

  const flush = (out: Section[], leafHeading: boolean, openParagraph = false): void => {
    const joined = body.join('\n');
    const text = bodyContinuesParagraph ? joined.trimEnd() : joined.trim();
    const heading = headingPath();
    const headingOnly = leafHeading && !emittedUnderHeading;
    if (pushProse(out, { text, heading, continues: emittedUnderHeading, openParagraph, headingOnly })) emittedUnderHeading = true;
    body = [];
    bodyChars = 0;
    bodyContinuesParagraph = openParagraph;
  };

  const startHeading = (out: Section[], level: number, text: string): void => {
    const top = stack.at(-1);
    flush(out, top !== undefined && top.level >= level);
    while ((stack.at(-1)?.level ?? 0) >= level) stack.pop();
    stack.push({ level, text });
    emittedUnderHeading = false;
  };

  const bodyLine = (line: string, out: Section[], raw = false): void => {
    const blank = line.trim() === '';
    // A blank line is never a fence, heading or underline: it skips the Markdown checks.
    if (options.markdown && !raw && !blank) {
      const marker = FENCE.exec(line)?.[1];
      if (fence !== null) {
        if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
      } else if (marker !== undefined) {
        fence = marker;
      } else {
        const marker = PAGE_MARKER.exec(line);
        if (marker !== null) {
          flush(out, false);
          page = marker[1] as string;
          return;
        }
        const atx = atxHeading(line);
        if (atx) return startHeading(out, atx.level, atx.text);
        const setext = SETEXT.exec(line);
        const last = body.at(-1);
        if (setext && last !== undefined && last.trim() !== '' && !NOT_PARAGRAPH.test(last)) {
          let from = body.length;
          while (from > 0 && (body[from - 1] ?? '').trim() !== '') from--;
          const heading = body
            .splice(from)
            .map((l) => l.trim())
            .join(' ');
          return startHeading(out, setext[1]?.startsWith('=') ? 1 : 2, heading);
        }
      }
    }
    if (blank) {
      // Cut at a paragraph break once the section is long (inside fenced code only once it is very long).
      if (bodyChars >= (fence === null ? SECTION_FLUSH_CHARS : SECTION_CUT_CHARS)) return flush(out, false);
      // Blank lines before any text only count towards the size: the text is trimmed anyway.
      if (body.length === 0) {
        bodyChars += line.length + 1;
        return;
      }
    } else if (bodyChars >= SECTION_CUT_CHARS) {
      flush(out, false, (body.at(-1) ?? '') !== '');
    }
    body.push(blank ? '' : line.trimEnd());
    bodyChars += line.length + 1;
  };

  const pushLine = (line: string, out: Section[]): void => {
    if (frontMatter === 'start') {
      frontMatter = line.trim() === '---' ? 'inside' : 'done';
      if (frontMatter === 'inside') return;
    } else if (frontMatter === 'inside') {
      const closes = line.trim() === '---' || line.trim() === '...';
      if (!closes && frontLines.length < MAX_FRONT_MATTER_LINES) {
        frontLines.push(line);
        return;
      }
      frontMatter = 'done';
      const parsed = closes ? frontMatterSections(frontLines) : undefined;
      if (parsed !== undefined) {
        out.push(...parsed);
        frontLines = [];
        return;
      }
      // Not front matter after all: its lines are plain text (no `---` underline may make a heading of them).
      for (const kept of ['---', ...frontLines]) bodyLine(kept, out, true);
      frontLines = [];
      bodyLine(line, out, closes);
      return;
    }
    bodyLine(line, out);
  };

  const pushLines = (lines: readonly string[], out: Section[]): void => {
    for (const line of lines) pushLine(line, out);
  };

  const end = (): Section[] => {
    const out: Section[] = [];
    if (frontMatter === 'inside') {
      frontMatter = 'done';
      for (const kept of ['---', ...frontLines]) bodyLine(kept, out, true);
    }
    flush(out, true);
    return out;
  };

  return { pushLines, end };
}

/** Sections of an in-memory text (an intelligence entry), split like a Markdown file. */
export function textSections(text: string, options: LineSectionOptions): Section[] {
  const lines = createLineSections(options);
  const out: Section[] = [];
  lines.pushLines(text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/), out);
  out.push(...lines.end());
  return out;
}
