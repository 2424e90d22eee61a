import { stat } from 'node:fs/promises';
import { MIB } from '../../../shared/plans.js';
import { parseFailed } from '../parse-error.js';
import { readText } from '../read-text.js';
import { xmlDeclaredEncoding } from './decode.js';
import type { Parser, RecordSection, Section } from '../types.js';
import { DEFAULT_MAX_WHOLE_FILE_BYTES } from './json.js';
import { RECORD_SECTION_CHARS } from './records.js';

/** Elements nested deeper than this fail the file (fast-xml-parser's own limit, and the walk's recursion). */
export const MAX_XML_DEPTH = 256;

type XmlNode = Record<string, unknown>;

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * XML's five predefined entities and numeric character references, decoded. Entity processing is off
 * in the parser (two entity-expansion CVEs in 2026), so nothing else is replaced: a reference to an
 * entity the document declares stays as written (`&name;`).
 */
export function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return PREDEFINED[ref.toLowerCase()] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

const XML_ENCODING = {
  declared: xmlDeclaredEncoding,
  hint: ' (or name its encoding in the XML declaration, as in <?xml version="1.0" encoding="windows-1251"?>)',
};

/**
 * Why the document's DTD is refused, or undefined: an entity built of other entities (the
 * billion-laughs shape), a parameter entity, or an external entity. Entities are never expanded and
 * no other file is read, so these are refused with what to do rather than half-read.
 */
function dtdProblem(text: string): string | undefined {
  const doctype = text.indexOf('<!DOCTYPE');
  if (doctype < 0) return undefined;
  const dtd = text.slice(doctype);
  const bomb = /<!ENTITY\s+(%\s*)?([^\s"']+)\s+(["'])([^"']*&[^"']*)\3/.exec(dtd)?.[2];
  if (bomb !== undefined) {
    return `the XML document's DTD declares entity "${bomb}" in terms of other entities; refused as a possible entity-expansion bomb (entities are never expanded). Remove the entity declarations and upload it again`;
  }
  const parameter = /<!ENTITY\s+%\s*([^\s"'>]+)/.exec(dtd)?.[1];
  if (parameter !== undefined) {
    return `the XML document's DTD declares the parameter entity "%${parameter};", which kbsync does not read (DTDs are not processed); remove it from the DOCTYPE and upload the file again`;
  }
  const external = /<!ENTITY\s+([^\s"'>]+)\s+(SYSTEM|PUBLIC)\b/.exec(dtd)?.[1];
  if (external !== undefined) {
    return `the XML document's DTD declares the external entity "${external}", which would read another file; refused (kbsync never reads files a document points to). Put the text in the document itself and upload it again`;
  }
  return undefined;
}

/** fast-xml-parser's complaint as a sentence that says what to do. */
function invalidXml(where: string, message: string): string {
  const what = message.trim().replace(/\.$/, '');
  return `invalid XML: ${where}${what}; fix the document (or save it again from the program that wrote it) and upload it again`;
}

const tagOf = (node: XmlNode): string | undefined => Object.keys(node).find((k) => k !== ':@');
const childrenOf = (node: XmlNode, tag: string): XmlNode[] => (node[tag] as XmlNode[] | undefined) ?? [];
const isText = (node: XmlNode): boolean => '#text' in node;
const textOf = (node: XmlNode): string => decodeXmlText(String(node['#text'] ?? '')).trim();

function attributesOf(node: XmlNode): [string, string][] {
  const attrs = node[':@'] as Record<string, unknown> | undefined;
  if (attrs === undefined) return [];
  return Object.entries(attrs)
    .filter(([name]) => name !== 'xmlns' && !name.startsWith('xmlns:'))
    .map(([name, value]) => [name, decodeXmlText(String(value)).trim()] as [string, string])
    .filter(([, value]) => value !== '');
}

/** All the text below an element, in document order, separated by spaces. */
function subtreeText(children: XmlNode[]): string {
  const parts: string[] = [];
  const walk = (nodes: XmlNode[]): void => {
    for (const n of nodes) {
      if (isText(n)) parts.push(textOf(n));
      else {
        const tag = tagOf(n);
        if (tag !== undefined) walk(childrenOf(n, tag));
      }
    }
  };
  walk(children);
  return parts.filter((p) => p !== '').join(' ');
}

/** Groups records by heading into sections of about RECORD_SECTION_CHARS (the later ones `continues`). */
function createXmlOutput(out: Section[]): {
  record(heading: string, record: string): void;
  prose(heading: string, text: string): void;
  end(): void;
} {
  let pending: RecordSection | undefined;
  let chars = 0;
  const flush = (): void => {
    if (pending !== undefined && pending.records.length > 0) out.push(pending);
    pending = undefined;
    chars = 0;
  };
  return {
    record(heading, record) {
      if (pending !== undefined && (pending.heading !== heading || chars >= RECORD_SECTION_CHARS)) {
        const same = pending.heading === heading;
        flush();
        if (same) pending = { heading, records: [], continues: true };
      }
      pending ??= { heading, records: [] };
      pending.records.push(record);
      chars += record.length;
    },
    prose(heading, text) {
      flush();
      out.push({ heading, text });
    },
    end: flush,
  };
}

/**
 * Walks the element tree: an element with text and elements mixed is prose (its whole text, headed
 * by its path); otherwise its attributes and its text-only children are one `name: value; ...`
 * record headed by its path ("catalog > book"), and its other children are walked in turn.
 */
function walkElement(node: XmlNode, tag: string, path: string[], emit: ReturnType<typeof createXmlOutput>): void {
  const children = childrenOf(node, tag);
  const here = [...path, tag];
  const heading = here.join(' > ');
  const elements = children.filter((c) => !isText(c));
  const texts = children
    .filter(isText)
    .map(textOf)
    .filter((t) => t !== '');
  if (elements.length > 0 && texts.length > 0) {
    emit.prose(heading, subtreeText(children));
    return;
  }
  let fields = attributesOf(node).map(([name, value]) => `${name}: ${value}`);
  if (elements.length === 0) {
    if (texts.length > 0) fields.push(`${tag}: ${texts.join(' ')}`);
    if (fields.length > 0) emit.record(path.length > 0 ? path.join(' > ') : heading, fields.join('; '));
    return;
  }
  for (const child of elements) {
    const childTag = tagOf(child);
    if (childTag === undefined) continue;
    const grandChildren = childrenOf(child, childTag);
    if (grandChildren.every(isText)) {
      // A text-only child is a field of this record, its attributes in brackets: `price: 10 (currency: EUR)`.
      const value = grandChildren
        .map(textOf)
        .filter((t) => t !== '')
        .join(' ');
      const attrs = attributesOf(child).map(([name, v]) => `${name}: ${v}`);
      const shown = [value, attrs.length > 0 ? `(${attrs.join(', ')})` : ''].filter((p) => p !== '').join(' ');
      if (shown !== '') fields.push(`${childTag}: ${shown}`);
      continue;
    }
    if (fields.length > 0) emit.record(heading, fields.join('; '));
    fields = [];
    walkElement(child, childTag, here, emit);
  }
  if (fields.length > 0) emit.record(heading, fields.join('; '));
}

async function* parseXml(path: string, maxBytes: number): AsyncGenerator<Section> {
  const { size } = await stat(path);
  if (size > maxBytes) {
    throw parseFailed(
      `XML file is ${(size / MIB).toFixed(1)} MiB, over the ${(maxBytes / MIB).toFixed(0)} MiB limit for an XML document (it is read whole); split it`,
    );
  }
  let text = '';
  for await (const piece of readText(path, XML_ENCODING)) text += piece;
  if (text.trim() === '') return;
  const dtd = dtdProblem(text);
  if (dtd !== undefined) throw parseFailed(dtd);
  const { XMLParser, XMLValidator } = await import('fast-xml-parser');
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: true });
  if (valid !== true) throw parseFailed(invalidXml(`line ${valid.err.line}, column ${valid.err.col}: `, valid.err.msg));
  let tree: XmlNode[];
  try {
    tree = new XMLParser({
      preserveOrder: true,
      ignoreAttributes: false,
      attributeNamePrefix: '',
      allowBooleanAttributes: true,
      processEntities: false,
      htmlEntities: false,
      parseTagValue: false,
      parseAttributeValue: false,
      trimValues: true,
      ignoreDeclaration: true,
      ignorePiTags: true,
      maxNestedTags: MAX_XML_DEPTH,
    }).parse(text) as XmlNode[];
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/nested tags/i.test(message))
      throw parseFailed(
        `XML elements nested more than ${MAX_XML_DEPTH} deep, over kbsync's limit; refused (is the file generated or hostile?): flatten the structure and upload it again`,
        err,
      );
    throw parseFailed(invalidXml('', message), err);
  }
  text = '';
  const out: Section[] = [];
  const emit = createXmlOutput(out);
  for (const node of tree) {
    const tag = tagOf(node);
    if (tag !== undefined && !isText(node)) walkElement(node, tag, [], emit);
  }
  emit.end();
  yield* out;
}

/**
 * XML (fast-xml-parser, entity processing off): element paths are kept as headings
 * ("catalog > book"); an element's attributes and text-only children are one record, mixed content
 * is prose. The document is read whole, so its size is limited like a whole JSON document's.
 */
export const xmlParser: Parser = {
  extensions: ['xml'],
  parse: (path, options) => parseXml(path, options?.maxWholeFileBytes ?? DEFAULT_MAX_WHOLE_FILE_BYTES),
};
