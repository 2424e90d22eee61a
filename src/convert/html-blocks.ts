import { inlineText } from './markdown.js';
import type { Block } from './slides.js';
import { elements, findAll, isEl, type XEl } from './xml.js';

/** Elements whose content is never text: scripts, styles, the head, forms' internals, media. */
const DROPPED = new Set([
  'head',
  'script',
  'style',
  'template',
  'noscript',
  'svg',
  'math',
  'img',
  'video',
  'audio',
  'object',
  'iframe',
  'select',
  'button',
]);
/** Elements that end the paragraph before them and start a new one. */
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'aside',
  'blockquote',
  'figure',
  'figcaption',
  'dl',
  'dt',
  'dd',
  'address',
  'center',
  'hr',
  'body',
  'html',
  'hgroup',
  'details',
  'summary',
  'caption',
  'form',
  'fieldset',
  'legend',
]);
/** `epub:type` values (or classes) of navigation and front-matter boilerplate, dropped with their content. */
const BOILERPLATE = /\b(toc|landmarks|page-list|loi|lot|cover|titlepage|halftitlepage)\b/;

const epubType = (el: XEl): string => el.attrs['epub:type'] ?? el.attrs.role ?? '';

/** The XHTML body's blocks: headings h1-h6, paragraphs, nested lists, tables, preformatted text, footnotes as `[^id]`. */
export function htmlBlocks(root: XEl): Block[] {
  const targets = new Set<string>();
  for (const a of findAll(root, 'a')) {
    const id = noteTarget(a);
    if (id !== undefined) targets.add(id);
  }
  const footnoteLabel = (el: XEl): string | undefined => {
    const id = (el.attrs.id ?? '').replace(/[^\w.-]/g, '');
    return id !== '' && (targets.has(id) || /\b(footnote|endnote|rearnote)\b/.test(epubType(el))) ? id : undefined;
  };
  const noteRef = (el: XEl): string | undefined => {
    const id = noteTarget(el);
    return id === undefined ? undefined : `[^${id}]`;
  };
  const blocks: Block[] = [];
  let inline = '';
  const flush = (): void => {
    const text = inlineText(inline);
    inline = '';
    if (text !== '') blocks.push({ kind: 'paragraph', text });
  };
  const textOf = (el: XEl): string => {
    let out = '';
    const walk = (e: XEl): void => {
      for (const c of e.children) {
        if (!isEl(c)) out += c;
        else if (c.name === 'br') out += ' ';
        else if (!DROPPED.has(c.name) && !isBackLink(c)) {
          const ref = noteRef(c);
          if (ref !== undefined) out += ref;
          else walk(c);
        }
      }
    };
    walk(el);
    return out;
  };
  const list = (el: XEl, depth: number): void => {
    const ordered = el.name === 'ol';
    for (const li of elements(el, 'li')) {
      let text = '';
      const nested: XEl[] = [];
      for (const c of li.children) {
        if (isEl(c) && (c.name === 'ul' || c.name === 'ol')) nested.push(c);
        else if (!isEl(c)) text += c;
        else if (!DROPPED.has(c.name)) text += ` ${textOf(c)} `;
      }
      const line = inlineText(text);
      const note = footnoteLabel(li);
      if (note !== undefined) blocks.push({ kind: 'paragraph', text: `[^${note}]: ${line}` });
      else if (line !== '') blocks.push({ kind: 'item', depth, text: line, ...(ordered ? { number: 0 } : {}) });
      for (const n of nested) list(n, depth + 1);
    }
  };
  const table = (el: XEl): void => {
    const rows: string[][] = [];
    const walkRows = (e: XEl): void => {
      for (const c of elements(e)) {
        if (c.name === 'tr')
          rows.push(
            elements(c)
              .filter((d) => d.name === 'td' || d.name === 'th')
              .map(textOf),
          );
        else if (c.name === 'thead' || c.name === 'tbody' || c.name === 'tfoot') walkRows(c);
      }
    };
    walkRows(el);
    blocks.push({ kind: 'table', rows });
  };
  const walk = (el: XEl): void => {
    for (const c of el.children) {
      if (!isEl(c)) {
        inline += c;
        continue;
      }
      if (
        DROPPED.has(c.name) ||
        c.name === 'nav' ||
        BOILERPLATE.test(epubType(c)) ||
        /\btitlepage\b/.test(c.attrs.class ?? '') ||
        isBackLink(c)
      )
        continue;
      const heading = /^h([1-6])$/.exec(c.name);
      if (heading !== null) {
        flush();
        blocks.push({ kind: 'heading', level: Number(heading[1]), text: textOf(c) });
      } else if (c.name === 'ul' || c.name === 'ol') {
        flush();
        list(c, 0);
      } else if (c.name === 'table') {
        flush();
        table(c);
      } else if (c.name === 'pre') {
        flush();
        blocks.push({ kind: 'code', text: textOf(c) });
      } else if (c.name === 'br') inline += ' ';
      else if (BLOCK.has(c.name) || c.name === 'li') {
        flush();
        const note = footnoteLabel(c);
        if (note !== undefined) blocks.push({ kind: 'paragraph', text: `[^${note}]: ${inlineText(textOf(c))}` });
        else walk(c);
        flush();
      } else {
        const ref = noteRef(c);
        if (ref !== undefined) inline += ref;
        else walk(c);
      }
    }
  };
  walk(root);
  flush();
  return blocks;
}

/** The id a note reference links to (`epub:type="noteref"`, or pandoc's and others' `footnote-ref`/`noteref` class), else undefined. */
function noteTarget(el: XEl): string | undefined {
  if (el.name !== 'a' || !(/\bnoteref\b/.test(epubType(el)) || /\b(footnote-ref|noteref|footnote-reference)\b/.test(el.attrs.class ?? '')))
    return undefined;
  const id = (el.attrs.href ?? '').split('#')[1]?.replace(/[^\w.-]/g, '');
  return id || undefined;
}

/** A footnote's link back to its reference (the ↩ after the note's text). */
const isBackLink = (el: XEl): boolean =>
  el.name === 'a' && (/\bbacklink\b/.test(epubType(el)) || /\bfootnote-back\b/.test(el.attrs.class ?? ''));
