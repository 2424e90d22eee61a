/**
 * Linear scans of a document's nesting depth, run before the input reaches code that recurses on
 * its structure (JSON.stringify, mammoth's XML DOM, hyparquet's schema tree): a file nested past
 * the limit fails as `parse_failed` naming the limit instead of overflowing the stack.
 */

/** JSON arrays and objects nested deeper than this fail the file (JSON and each JSONL line). */
export const MAX_JSON_DEPTH = 512;
/** Elements of an Office part (DOCX, XLSX) nested deeper than this fail the file. */
export const MAX_OFFICE_XML_DEPTH = 256;

/**
 * The offset of the bracket that takes JSON text past `max` levels of arrays and objects, or
 * undefined when it stays within. Strings are skipped (brackets inside them do not count); the text
 * need not be valid JSON (JSON.parse reports that).
 */
export function jsonDepthOver(text: string, max: number): number | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = text.indexOf('"', i + 1);
      while (end > 0 && backslashesBefore(text, end) % 2 === 1) end = text.indexOf('"', end + 1);
      if (end < 0) return undefined;
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}

function backslashesBefore(text: string, at: number): number {
  let n = 0;
  while (text.charCodeAt(at - 1 - n) === 0x5c) n++;
  return n;
}

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const DQUOTE = 0x22;
const SQUOTE = 0x27;

/** What a scan of an XML part found: where it first nests past the limit, and where it declares a DTD. */
export type XmlPartScan = { depthOverAt?: number; doctypeAt?: number };

/**
 * Scans XML bytes for element depth over `max` and for a `<!DOCTYPE`, skipping comments, CDATA,
 * processing instructions and quoted attribute values. Stops at the first finding.
 */
export function scanXmlPart(xml: Uint8Array, max: number): XmlPartScan {
  const buf = Buffer.from(xml.buffer, xml.byteOffset, xml.byteLength);
  let depth = 0;
  let i = buf.indexOf(LT);
  while (i >= 0 && i < buf.length - 1) {
    const next = buf[i + 1];
    let end: number;
    if (next === SLASH) {
      depth--;
      end = buf.indexOf(GT, i);
    } else if (next === QUESTION) {
      end = buf.indexOf('?>', i);
    } else if (next === BANG) {
      if (startsWith(buf, i, '<!--')) end = buf.indexOf('-->', i);
      else if (startsWith(buf, i, '<![CDATA[')) end = buf.indexOf(']]>', i);
      else if (startsWith(buf, i, '<!DOCTYPE')) return { doctypeAt: i };
      else end = buf.indexOf(GT, i);
    } else {
      end = tagEnd(buf, i + 1);
      if (end < 0) break;
      if (buf[end - 1] !== SLASH && ++depth > max) return { depthOverAt: i };
    }
    if (end < 0) break;
    i = buf.indexOf(LT, end);
  }
  return {};
}

const startsWith = (buf: Buffer, at: number, text: string): boolean => buf.toString('latin1', at, at + text.length).toUpperCase() === text;

/** The `>` that closes a start tag, past any quoted attribute values; -1 when there is none. */
function tagEnd(buf: Buffer, from: number): number {
  for (let j = from; j < buf.length; j++) {
    const c = buf[j];
    if (c === GT) return j;
    if (c === DQUOTE || c === SQUOTE) {
      j = buf.indexOf(c as number, j + 1);
      if (j < 0) return -1;
    }
  }
  return -1;
}
