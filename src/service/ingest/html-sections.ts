import { MIB } from '../../shared/plans.js';
import { SECTION_CUT_CHARS, SECTION_FLUSH_CHARS } from './line-sections.js';
import { parseFailed } from './parse-error.js';
import { pushProse, type Section } from './types.js';

/** A tag, comment or attribute still open after this many characters fails the file (its text would be held whole). */
export const MAX_HTML_TOKEN_CHARS = 4 * MIB;

/**
 * Elements open at once beyond this fail the file: the HTML parser's work per tag grows with the
 * depth, so a bound keeps a page of unclosed tags linear. Browsers stop nesting at 512 as well.
 */
export const MAX_HTML_DEPTH = 512;

export type HtmlSectionOptions = {
  /**
   * mammoth's HTML for a DOCX: its footnote and endnote links ("[1]", "↑") are dropped, and the
   * notes it lists at the end go under a "Footnotes" or "Endnotes" heading instead of the last one.
   */
  docx?: boolean;
};

export type HtmlSections = {
  /** Takes the next piece of HTML, appending the sections it completes to `out`. */
  write(html: string, out: Section[]): void;
  /** The sections still held, at the end of the document. */
  end(out: Section[]): void;
};

/** Never read: not the page's text (head, code, embedded objects) or navigation. */
const SKIPPED = new Set([
  'head',
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'nav',
  'iframe',
  'object',
  'embed',
  'canvas',
  'select',
  'button',
  'textarea',
  'video',
  'audio',
]);
const SKIPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'search', 'menu', 'menubar']);
/** Elements that end a paragraph where they start and where they end. */
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'blockquote',
  'address',
  'figure',
  'figcaption',
  'dl',
  'dd',
  'dt',
  'hr',
  'form',
  'fieldset',
  'legend',
  'details',
  'summary',
  'center',
  'body',
  'html',
  'caption',
  'ul',
  'ol',
  'menu',
  'table',
  'pre',
]);
const HEADING = /^h([1-6])$/;
const SPACE_RUN = /[ \t\n\r\f]+/g;

function isSkipped(name: string, attribs: Record<string, string>): boolean {
  if (SKIPPED.has(name)) return true;
  if ('hidden' in attribs || attribs['aria-hidden'] === 'true') return true;
  const role = attribs.role?.trim().toLowerCase();
  return role !== undefined && SKIPPED_ROLES.has(role);
}

function isNoteLink(attribs: Record<string, string>): boolean {
  const ref = `${attribs.id ?? ''} ${attribs.href ?? ''}`;
  return /(^|#| )(footnote|endnote)-ref-/.test(ref);
}

/**
 * Turns HTML, written a piece at a time, into prose sections: each h1-h6 starts a section whose
 * heading path ("Guide > Install") heads its chunks; paragraphs are separated by blank lines; list
 * items are lines starting "- "; a table row is one line, its cells joined by " | ". The head,
 * scripts, styles, navigation and hidden elements are left out. Memory stays flat: a long section
 * is handed on at a paragraph break, a very long paragraph is cut (and marked `openParagraph`).
 */
export async function createHtmlSections(options: HtmlSectionOptions = {}): Promise<HtmlSections> {
  // Loaded here, not at start-up: only a service that reads HTML or DOCX needs it.
  const { Parser: HtmlParser } = await import('htmlparser2');
  const headings: { level: number; text: string }[] = [];
  let body: string[] = [];
  let bodyChars = 0;
  let emittedUnderHeading = false;
  let continuesParagraph = false;
  /** The paragraph being read: its pieces of text (whitespace already collapsed). */
  let para: string[] = [];
  let paraChars = 0;
  let lastChar = '\n';
  let heading: { level: number; pieces: string[] } | undefined;
  const open: { name: string; skip: boolean }[] = [];
  let skipping = 0;
  let preDepth = 0;
  let cellDepth = 0;
  /** Some cell of the current table row held text. */
  let rowHasText = false;
  /** A cell started after a cell with text: " | " goes in front of its first text. */
  let cellSeparator = false;
  /** The paragraph ends with a list marker ("- ") that no text has followed yet. */
  let justMarked = false;
  let listItems = 0;
  let notes: string | undefined;
  let out: Section[] = [];

  const headingPath = (): string | undefined => (headings.length === 0 ? undefined : headings.map((h) => h.text).join(' > '));

  const flush = (leafHeading: boolean, openParagraph = false): void => {
    const text = body.join('\n\n');
    const heading = headingPath();
    const headingOnly = leafHeading && !emittedUnderHeading;
    if (pushProse(out, { text, heading, continues: emittedUnderHeading, openParagraph, headingOnly })) emittedUnderHeading = true;
    body = [];
    bodyChars = 0;
    continuesParagraph = openParagraph;
  };

  /** Drops the spaces the paragraph ends with (before a line break or a cell separator). */
  function trimTrailingSpace(): void {
    while (lastChar === ' ' && para.length > 0) {
      const last = para.pop() ?? '';
      const trimmed = last.replace(/ +$/, '');
      paraChars -= last.length - trimmed.length;
      if (trimmed !== '') para.push(trimmed);
      lastChar = para.at(-1)?.at(-1) ?? '\n';
    }
  }

  /** Appends text to the paragraph (or the heading being read); a very long paragraph is cut between words. */
  const append = (text: string): void => {
    if (text === '') return;
    if (heading !== undefined) {
      heading.pieces.push(text);
      return;
    }
    if (cellSeparator && cellDepth > 0 && text.trim() !== '') {
      cellSeparator = false;
      trimTrailingSpace();
      para.push(' | ');
      paraChars += 3;
      text = text.replace(/^ +/, '');
    }
    if (text.trim() !== '') {
      justMarked = false;
      if (cellDepth > 0) rowHasText = true;
    }
    para.push(text);
    paraChars += text.length;
    lastChar = text[text.length - 1] ?? lastChar;
    if (paraChars >= SECTION_CUT_CHARS) {
      const joined = para.join('');
      const cut = Math.max(joined.lastIndexOf(' '), joined.lastIndexOf('\n'));
      const at = cut > SECTION_CUT_CHARS / 2 ? cut : joined.length;
      const head = continuesParagraph && body.length === 0 ? joined.slice(0, at).trimEnd() : joined.slice(0, at).trim();
      if (head !== '') body.push(head);
      flush(false, true);
      const rest = joined.slice(at).replace(/^ +/, '');
      para = rest === '' ? [] : [rest];
      paraChars = rest.length;
    }
  };

  const endParagraph = (): void => {
    if (heading !== undefined) return;
    const joined = para.join('');
    const text = continuesParagraph && body.length === 0 ? joined.trimEnd() : joined.replace(/^[ \n]+|[ \n]+$/g, '');
    para = [];
    paraChars = 0;
    lastChar = '\n';
    if (text !== '') {
      body.push(text);
      bodyChars += text.length + 2;
    } else if (continuesParagraph && body.length === 0) {
      continuesParagraph = false;
    }
    if (bodyChars >= SECTION_FLUSH_CHARS) flush(false);
  };

  const lineBreak = (): void => {
    if (heading !== undefined || paraChars === 0) return;
    trimTrailingSpace();
    if (paraChars > 0 && lastChar !== '\n') append('\n');
  };

  const startHeading = (level: number, text: string): void => {
    const top = headings.at(-1);
    flush(top !== undefined && top.level >= level);
    while ((headings.at(-1)?.level ?? 0) >= level) headings.pop();
    headings.push({ level, text });
    emittedUnderHeading = false;
  };

  const text = (raw: string): void => {
    if (skipping > 0) return;
    if (preDepth > 0 && heading === undefined) {
      append(raw.replace(/\r\n?/g, '\n'));
      return;
    }
    let collapsed = raw.replace(SPACE_RUN, ' ');
    const atStart = heading !== undefined ? heading.pieces.length === 0 : paraChars === 0 || lastChar === '\n' || lastChar === ' ';
    if (atStart) collapsed = collapsed.replace(/^ /, '');
    append(collapsed);
  };

  /** A block starts or ends: a new paragraph, or inside a list item a new line (none right after its marker). */
  const blockBoundary = (name: string): void => {
    if (listItems > 0 && name !== 'ul' && name !== 'ol' && name !== 'table') {
      if (!justMarked) lineBreak();
      return;
    }
    endParagraph();
  };

  const onOpen = (name: string, attribs: Record<string, string>): void => {
    const skip = skipping > 0 || isSkipped(name, attribs) || (options.docx === true && name === 'a' && isNoteLink(attribs));
    open.push({ name, skip });
    if (open.length > MAX_HTML_DEPTH) {
      throw parseFailed(
        `elements are nested more than ${MAX_HTML_DEPTH} deep (<${name}> near offset ${parser.startIndex}; unclosed tags?); refused (is the file generated or damaged?)`,
      );
    }
    if (skip) {
      skipping++;
      return;
    }
    const level = HEADING.exec(name)?.[1];
    if (level !== undefined && cellDepth === 0) {
      endParagraph();
      heading = { level: Number(level), pieces: [] };
      return;
    }
    if (name === 'td' || name === 'th') {
      if (cellDepth === 0) cellSeparator = rowHasText;
      cellDepth++;
      return;
    }
    if (cellDepth > 0) {
      if (BLOCKS.has(name) || name === 'br' || name === 'li' || name === 'tr') text(' ');
      return;
    }
    if (name === 'tr') {
      lineBreak();
      rowHasText = false;
      cellSeparator = false;
    } else if (name === 'li') {
      listItems++;
      const id = attribs.id ?? '';
      const kind = options.docx === true ? /^(footnote|endnote)-/.exec(id)?.[1] : undefined;
      if (kind !== undefined && notes !== kind) {
        endParagraph();
        notes = kind;
        startHeading(1, kind === 'footnote' ? 'Footnotes' : 'Endnotes');
      }
      lineBreak();
      append('- ');
      justMarked = true;
    } else if (name === 'br') lineBreak();
    else if (BLOCKS.has(name)) blockBoundary(name);
    if (name === 'pre') preDepth++;
  };

  const onClose = (name: string): void => {
    let top = open.pop();
    // htmlparser2 closes what it opened, innermost first; a mismatch is skipped over defensively.
    while (top !== undefined && top.name !== name) top = open.pop();
    if (top === undefined) return;
    if (top.skip) {
      skipping--;
      return;
    }
    const level = HEADING.exec(name)?.[1];
    if (level !== undefined && heading !== undefined) {
      const headingText = heading.pieces.join('').replace(SPACE_RUN, ' ').trim();
      const headingLevel = heading.level;
      heading = undefined;
      if (headingText !== '') startHeading(headingLevel, headingText);
      return;
    }
    if (name === 'td' || name === 'th') {
      cellDepth = Math.max(0, cellDepth - 1);
      if (cellDepth === 0) cellSeparator = false;
      return;
    }
    if (cellDepth > 0) return;
    if (name === 'pre') preDepth = Math.max(0, preDepth - 1);
    if (name === 'tr') {
      lineBreak();
      rowHasText = false;
      cellSeparator = false;
    } else if (name === 'li') {
      listItems = Math.max(0, listItems - 1);
      lineBreak();
    } else if (BLOCKS.has(name)) blockBoundary(name);
  };

  const parser = new HtmlParser(
    {
      onopentag: (name, attribs) => onOpen(name, attribs),
      onclosetag: (name) => onClose(name),
      ontext: (data) => text(data),
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  let written = 0;

  return {
    write(html, target) {
      out = target;
      parser.write(html);
      written += html.length;
      // Text is handed on as it comes; only a tag, comment or attribute is held until it ends.
      if (written - parser.endIndex > MAX_HTML_TOKEN_CHARS) {
        throw parseFailed(
          `a tag, comment or attribute near offset ${parser.endIndex + 1} is longer than ${MAX_HTML_TOKEN_CHARS / MIB} MiB; refused (is the file damaged or not HTML?)`,
        );
      }
    },
    end(target) {
      out = target;
      parser.end();
      heading = undefined;
      endParagraph();
      flush(true);
    },
  };
}
