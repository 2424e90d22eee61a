import { Parser } from 'htmlparser2';
import { failed } from './failure.js';

/** One element of a parsed part: its qualified name, attributes and children (elements and text, in order). */
export type XEl = { name: string; attrs: Record<string, string>; children: XNode[] };
export type XNode = XEl | string;

export const isEl = (n: XNode): n is XEl => typeof n !== 'string';

/**
 * Parses one XML (or, with `html`, XHTML/HTML) part into a light tree. No DTD is read and no entity
 * other than XML's five and numeric references is expanded (HTML mode adds HTML's named ones), so a
 * part cannot reach another file or expand without bound. Elements nested past `maxDepth` and, in XML
 * mode, elements left open or closed out of order fail naming `part`.
 */
export function parseXml(text: string, part: string, maxDepth: number, html = false): XEl {
  const root: XEl = { name: '#document', attrs: {}, children: [] };
  const stack: XEl[] = [root];
  // Where each open element's start tag ended: a self-closing tag's close comes at the same place.
  const openEnds: number[] = [];
  let problem: string | undefined;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (problem !== undefined) return;
        if (stack.length > maxDepth) {
          problem = `${part} nests elements more than ${maxDepth} deep, past the limit: a hostile file, or raise maxDepth`;
          parser.pause();
          return;
        }
        const el: XEl = { name, attrs: attribs, children: [] };
        (stack[stack.length - 1] as XEl).children.push(el);
        stack.push(el);
        openEnds.push(parser.endIndex);
      },
      onclosetag(name, isImplied) {
        if (problem !== undefined) return;
        const openEnd = openEnds.pop();
        if (isImplied && !html && openEnd !== parser.endIndex) problem = `${part} is not well-formed XML (<${name}> is not closed)`;
        if (stack.length > 1) stack.pop();
      },
      ontext(data) {
        if (problem !== undefined) return;
        const children = (stack[stack.length - 1] as XEl).children;
        const last = children.length - 1;
        if (typeof children[last] === 'string') children[last] += data;
        else children.push(data);
      },
    },
    html ? { decodeEntities: true, recognizeSelfClosing: true, lowerCaseTags: true } : { xmlMode: true, decodeEntities: true },
  );
  parser.end(text);
  if (problem !== undefined) throw failed(problem);
  if (!html && !root.children.some(isEl)) throw failed(`${part} holds no XML element: the part is empty or damaged`);
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
