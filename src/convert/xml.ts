import { TextDecoder } from 'node:util';
import { Parser } from 'htmlparser2';
import { failed } from './failure.js';

/** One element of a parsed part: its qualified name, attributes and children (elements and text, in order). */
export type XEl = { name: string; attrs: Record<string, string>; children: XNode[] };
export type XNode = XEl | string;

export const isEl = (n: XNode): n is XEl => typeof n !== 'string';

/** What a streamed part's elements and text are handed to, in document order. */
export type XmlHandler = {
  open(name: string, attrs: Record<string, string>): void;
  close(name: string): void;
  text(data: string): void;
};

const CHUNK_BYTES = 1 << 20;

/**
 * Streams one XML (or, with `html`, XHTML/HTML) part through `handler` (bytes are decoded as UTF-8 a
 * chunk at a time, so a large part is never one string). No DTD is read and no entity other than XML's
 * five and numeric references is expanded (HTML mode adds HTML's named ones), so a part cannot reach
 * another file or expand without bound. Elements nested past `maxDepth` and, in XML mode, elements left
 * open or closed out of order fail naming `part`.
 */
export function streamXml(input: string | Uint8Array, part: string, maxDepth: number, handler: XmlHandler, html = false): void {
  // Where each open element's start tag ended: a self-closing tag's close comes at the same place.
  const openEnds: number[] = [];
  let elements = 0;
  let problem: string | undefined;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (problem !== undefined) return;
        if (openEnds.length >= maxDepth) {
          problem = `${part} nests elements more than ${maxDepth} deep, past the limit: a hostile file, or raise maxDepth`;
          parser.pause();
          return;
        }
        elements++;
        openEnds.push(parser.endIndex);
        handler.open(name, attribs);
      },
      onclosetag(name, isImplied) {
        if (problem !== undefined) return;
        const openEnd = openEnds.pop();
        if (isImplied && !html && openEnd !== parser.endIndex) problem = `${part} is not well-formed XML (<${name}> is not closed)`;
        handler.close(name);
      },
      ontext(data) {
        if (problem === undefined) handler.text(data);
      },
    },
    html ? { decodeEntities: true, recognizeSelfClosing: true, lowerCaseTags: true } : { xmlMode: true, decodeEntities: true },
  );
  if (typeof input === 'string') parser.end(input);
  else {
    const decoder = new TextDecoder('utf-8');
    for (let at = 0; at < input.length && problem === undefined; at += CHUNK_BYTES) {
      parser.write(decoder.decode(input.subarray(at, at + CHUNK_BYTES), { stream: at + CHUNK_BYTES < input.length }));
    }
    parser.end();
  }
  if (problem !== undefined) throw failed(problem);
  if (!html && elements === 0) throw failed(`${part} holds no XML element: the part is empty or damaged`);
}

/** One part parsed into a light tree, within the limits `streamXml` keeps. */
export function parseXml(text: string | Uint8Array, part: string, maxDepth: number, html = false): XEl {
  const root: XEl = { name: '#document', attrs: {}, children: [] };
  const stack: XEl[] = [root];
  streamXml(
    text,
    part,
    maxDepth,
    {
      open(name, attrs) {
        const el: XEl = { name, attrs, children: [] };
        (stack[stack.length - 1] as XEl).children.push(el);
        stack.push(el);
      },
      close() {
        if (stack.length > 1) stack.pop();
      },
      text(data) {
        const children = (stack[stack.length - 1] as XEl).children;
        const last = children.length - 1;
        if (typeof children[last] === 'string') children[last] += data;
        else children.push(data);
      },
    },
    html,
  );
  return root;
}

/** Children of `el` that are elements, optionally only those named `name`. */
export function elements(el: XEl, name?: string): XEl[] {
  const out: XEl[] = [];
  for (const c of el.children) if (isEl(c) && (name === undefined || c.name === name)) out.push(c);
  return out;
}

export const child = (el: XEl, name: string): XEl | undefined => el.children.find((c): c is XEl => isEl(c) && c.name === name);

/** The first element named `name` at any depth below `el` (depth-first, document order). */
export function find(el: XEl, name: string): XEl | undefined {
  const stack: XEl[] = [el];
  while (stack.length > 0) {
    const at = stack.pop() as XEl;
    if (at !== el && at.name === name) return at;
    for (let i = at.children.length - 1; i >= 0; i--) {
      const c = at.children[i] as XNode;
      if (isEl(c)) stack.push(c);
    }
  }
  return undefined;
}

/** Every element named `name` below `el`, in document order (not descending into matches). */
export function findAll(el: XEl, name: string): XEl[] {
  const out: XEl[] = [];
  const stack: XEl[] = [...elements(el)].reverse();
  while (stack.length > 0) {
    const at = stack.pop() as XEl;
    if (at.name === name) {
      out.push(at);
      continue;
    }
    for (let i = at.children.length - 1; i >= 0; i--) {
      const c = at.children[i] as XNode;
      if (isEl(c)) stack.push(c);
    }
  }
  return out;
}

/** All the text below `el`, in document order. */
export function textOf(el: XEl): string {
  let out = '';
  const stack: XNode[] = [el];
  while (stack.length > 0) {
    const at = stack.pop() as XNode;
    if (typeof at === 'string') out += at;
    else for (let i = at.children.length - 1; i >= 0; i--) stack.push(at.children[i] as XNode);
  }
  return out;
}
