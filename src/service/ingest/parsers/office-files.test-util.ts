// Test support only: builds DOCX files (and any ZIP, with whatever sizes it should declare) in memory.
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';

export type ZipEntry = {
  name: string;
  /** The bytes as stored (already deflated when `method` is 8). */
  stored: Buffer;
  method: 0 | 8;
  crc: number;
  /** What the central directory says the entry inflates to (a hostile archive may lie). */
  declaredSize: number;
};

/** An entry deflated here, declaring its true size. */
export function deflated(name: string, content: string | Buffer): ZipEntry {
  const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { name, stored: deflateRawSync(data), method: 8, crc: crc32(data), declaredSize: data.length };
}

/** A ZIP archive of these entries, written as given (local headers, data, central directory, end record). */
export function zipOf(entries: readonly ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt32LE(e.crc >>> 0, 14);
    local.writeUInt32LE(e.stored.length, 18);
    local.writeUInt32LE(e.declaredSize, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(e.method, 10);
    central.writeUInt32LE(e.crc >>> 0, 16);
    central.writeUInt32LE(e.stored.length, 20);
    central.writeUInt32LE(e.declaredSize, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, e.stored);
    centrals.push(central, name);
    offset += local.length + name.length + e.stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`;
const PACKAGE_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;
const DOCUMENT_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`;
const STYLES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="${W}">${[1, 2, 3].map((n) => `<w:style w:type="paragraph" w:styleId="Heading${n}"><w:name w:val="heading ${n}"/></w:style>`).join('')}</w:styles>`;

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A Word paragraph; `heading` gives it the style "heading N". */
export function paragraph(text: string, heading?: number): string {
  const style = heading === undefined ? '' : `<w:pPr><w:pStyle w:val="Heading${heading}"/></w:pPr>`;
  return `<w:p>${style}<w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r></w:p>`;
}

/** A Word table of these rows of cell texts. */
export function table(rows: string[][]): string {
  return `<w:tbl>${rows.map((r) => `<w:tr>${r.map((c) => `<w:tc>${paragraph(c)}</w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`;
}

/** The `word/document.xml` part around this body XML. */
export function documentXml(body: string): string {
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="${W}"><w:body>${body}</w:body></w:document>`;
}

/** The entries of a minimal DOCX (content types, relationships, heading styles) with this document part. */
export function docxEntries(document: ZipEntry): ZipEntry[] {
  return [
    deflated('[Content_Types].xml', CONTENT_TYPES),
    deflated('_rels/.rels', PACKAGE_RELS),
    deflated('word/_rels/document.xml.rels', DOCUMENT_RELS),
    deflated('word/styles.xml', STYLES),
    document,
  ];
}

/** A minimal DOCX whose body is this XML. */
export function docxOf(body: string, extra: ZipEntry[] = []): Buffer {
  return zipOf([...docxEntries(deflated('word/document.xml', documentXml(body))), ...extra]);
}

/**
 * A `word/document.xml` entry that inflates to about `inflatedBytes` of repeated paragraphs
 * (deflated a MiB at a time as one stream, so the test never holds it whole), declaring `declaredSize`.
 */
export async function bombDocument(inflatedBytes: number, declaredSize?: number): Promise<ZipEntry> {
  const unit = Buffer.from(paragraph('Zip bomb paragraph, repeated until the part is huge.'));
  const piece = Buffer.alloc(1024 * 1024 - ((1024 * 1024) % unit.length));
  for (let at = 0; at < piece.length; at += unit.length) unit.copy(piece, at);
  const head = Buffer.from(documentXml('').replace('</w:body></w:document>', ''));
  const tail = Buffer.from('</w:body></w:document>');
  const count = Math.max(1, Math.floor((inflatedBytes - head.length - tail.length) / piece.length));
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (b: Buffer) => out.push(b));
  const done = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  let crc = crc32(head);
  deflate.write(head);
  for (let i = 0; i < count; i++) {
    crc = crc32(piece, crc);
    if (!deflate.write(piece)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  crc = crc32(tail, crc);
  deflate.end(tail);
  await done;
  const size = head.length + count * piece.length + tail.length;
  return { name: 'word/document.xml', stored: Buffer.concat(out), method: 8, crc, declaredSize: declaredSize ?? size };
}
