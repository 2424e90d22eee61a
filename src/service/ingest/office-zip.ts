import { open as openFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Entry as YauzlEntry, ZipFile as YauzlZip } from 'yauzl';
import { isKbsyncError } from '../../shared/errors.js';
import { MIB } from '../../shared/plans.js';
import { parseFailed } from './parse-error.js';
import { MAX_OFFICE_XML_DEPTH, scanXmlPart } from './parsers/depth.js';
import { sizeText } from './size-text.js';

/**
 * Limits on what an Office file (DOCX, XLSX: a ZIP of XML parts) may inflate to. The libraries that
 * read these files (mammoth, SheetJS) inflate whole parts with no limit, so kbsync checks the ZIP
 * first: a part is inflated here only after its declared sizes pass, the inflating stops at the
 * declared size (yauzl) and at the limit, and the library is then handed an uncompressed copy of
 * exactly the parts that passed.
 */
export type ZipLimits = {
  /** Most entries in the archive (the central directory is read entry by entry). */
  maxEntries: number;
  /** Largest one part may inflate to. */
  maxPartBytes: number;
  /** Largest all the kept parts together may inflate to. */
  maxTotalBytes: number;
  /** Highest inflated/compressed ratio of a part that inflates past `ratioFloorBytes` (a zip bomb reaches a thousand). */
  maxRatio: number;
  ratioFloorBytes: number;
};

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxPartBytes: 64 * MIB,
  maxTotalBytes: 96 * MIB,
  maxRatio: 200,
  ratioFloorBytes: 1 * MIB,
};

/** The first bytes of an OLE2/CFB container: what Office writes for a password-protected (encrypted) file. */
const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** True when the file starts like an OLE2/CFB container (an encrypted Office file, or an old .doc/.xls). */
export async function isCfbContainer(path: string): Promise<boolean> {
  const handle = await openFile(path, 'r');
  try {
    const head = Buffer.alloc(CFB_MAGIC.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.equals(CFB_MAGIC);
  } finally {
    await handle.close();
  }
}

function openZip(path: string): Promise<YauzlZip> {
  return import('yauzl').then(
    ({ default: yauzl }) =>
      new Promise((resolve, reject) => {
        yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false }, (err, zip) =>
          err ? reject(err) : resolve(zip),
        );
      }),
  );
}

/** Every central-directory entry, read one at a time (the count was checked before). */
function readEntries(zip: YauzlZip): Promise<YauzlEntry[]> {
  return new Promise((resolve, reject) => {
    const entries: YauzlEntry[] = [];
    zip.on('entry', (entry: YauzlEntry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', reject);
    zip.readEntry();
  });
}

function openEntry(zip: YauzlZip, entry: YauzlEntry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream))));
}

/** Inflates one entry, stopping at `maxBytes` (yauzl itself stops at the declared size). */
async function inflateEntry(zip: YauzlZip, entry: YauzlEntry, maxBytes: number): Promise<Buffer> {
  const stream = await openEntry(zip, entry);
  const pieces: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const piece of stream as AsyncIterable<Buffer>) {
      bytes += piece.length;
      if (bytes > maxBytes) throw new InflateLimit();
      pieces.push(piece);
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(pieces, bytes);
}

class InflateLimit extends Error {}

/** What yauzl's message about a damaged archive means for the user. */
function describeZipError(format: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/end of central directory record signature not found/i.test(message)) {
    return `not a valid ${format} file: the ZIP archive is truncated or damaged (its end-of-central-directory record is missing); upload the complete file again`;
  }
  if (
    /too many bytes in the stream|too few bytes|invalid|unexpected|signature|crc|offset|overflow|inflat|incorrect header|unexpected end/i.test(
      message,
    )
  ) {
    return `not a valid ${format} file: the ZIP archive is damaged (${message}); open and save it again in its application`;
  }
  return `could not read the ${format} file as a ZIP archive (${message})`;
}

/**
 * Reads the parts `keep` selects from an Office ZIP, within `limits`, and returns them inflated,
 * by name. Hostile or damaged archives throw `parse_failed` naming what is wrong; a part over a
 * limit is refused before it is inflated when its declared size shows it, and while it is inflated
 * otherwise (a part that inflates past its declared size is refused at that size).
 */
export async function readOfficeZip(
  path: string,
  format: string,
  keep: (name: string) => boolean,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Promise<Map<string, Buffer>> {
  if (await isCfbContainer(path)) {
    throw parseFailed(
      `the ${format} file is password-protected (encrypted) or is an older binary Office file renamed: it is an OLE container, not a ZIP archive. Remove the password (or save it as ${format}) and upload it again`,
    );
  }
  let zip: YauzlZip;
  try {
    zip = await openZip(path);
  } catch (err) {
    throw parseFailed(describeZipError(format, err), err);
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw parseFailed(
        `the ${format} archive holds ${zip.entryCount} entries, over the limit of ${limits.maxEntries}; refused as a possible zip bomb`,
      );
    }
    let entries: YauzlEntry[];
    try {
      entries = await readEntries(zip);
    } catch (err) {
      throw parseFailed(describeZipError(format, err), err);
    }
    const kept = entries.filter((e) => !e.fileName.endsWith('/') && keep(e.fileName));
    // The declared numbers first, for every kept part, before anything is inflated.
    let declaredTotal = 0;
    for (const e of kept) {
      if (e.isEncrypted())
        throw parseFailed(`the ${format} file is encrypted (part ${e.fileName}); remove the password and upload it again`);
      if (e.uncompressedSize > limits.maxPartBytes) {
        throw parseFailed(
          `the ${format} part ${e.fileName} declares ${sizeText(e.uncompressedSize)} uncompressed, over the ${sizeText(limits.maxPartBytes)} limit for one part; refused as a possible zip bomb (split the document)`,
        );
      }
      if (e.uncompressedSize > limits.ratioFloorBytes && e.uncompressedSize > limits.maxRatio * Math.max(1, e.compressedSize)) {
        throw parseFailed(
          `the ${format} part ${e.fileName} inflates ${Math.round(e.uncompressedSize / Math.max(1, e.compressedSize))} times (${sizeText(e.compressedSize)} to ${sizeText(e.uncompressedSize)}), over the limit of ${limits.maxRatio}; refused as a possible zip bomb`,
        );
      }
      declaredTotal += e.uncompressedSize;
    }
    if (declaredTotal > limits.maxTotalBytes) {
      throw parseFailed(
        `the ${format} parts declare ${sizeText(declaredTotal)} uncompressed in all, over the ${sizeText(limits.maxTotalBytes)} limit; refused as a possible zip bomb (split the document)`,
      );
    }
    const parts = new Map<string, Buffer>();
    for (const e of kept) {
      try {
        const data = await inflateEntry(zip, e, Math.min(e.uncompressedSize, limits.maxPartBytes));
        checkXmlPart(format, e.fileName, data);
        parts.set(e.fileName, data);
      } catch (err) {
        if (isKbsyncError(err, 'parse_failed')) throw err;
        if (err instanceof InflateLimit || /too many bytes in the stream/i.test(String(err))) {
          throw parseFailed(
            `the ${format} part ${e.fileName} inflates past its declared size of ${sizeText(e.uncompressedSize)}; refused as a damaged or hostile archive (a possible zip bomb)`,
            err,
          );
        }
        throw parseFailed(describeZipError(format, err), err);
      }
    }
    return parts;
  } finally {
    zip.close();
  }
}

/**
 * An XML part is refused when it declares a DTD (Office never writes one; its entities could read
 * other files or expand without bound) or nests elements past MAX_OFFICE_XML_DEPTH (the libraries
 * that read it recurse on its elements).
 */
function checkXmlPart(format: string, name: string, data: Buffer): void {
  if (!/\.(xml|rels)$/i.test(name)) return;
  const scan = scanXmlPart(data, MAX_OFFICE_XML_DEPTH);
  if (scan.doctypeAt !== undefined) {
    throw parseFailed(
      `the ${format} part ${name} declares a DTD (<!DOCTYPE>), which Office never writes; refused, as its entities could read other files or expand without bound. Open the file in Office or LibreOffice, save it again and upload that copy`,
    );
  }
  if (scan.depthOverAt !== undefined) {
    throw parseFailed(
      `the ${format} part ${name} nests XML elements more than ${MAX_OFFICE_XML_DEPTH} deep, over kbsync's limit; simplify the document (fewer nested tables or content controls) and upload it again`,
    );
  }
}

/** A ZIP archive holding these parts uncompressed (what mammoth and SheetJS are handed: they inflate nothing). */
export async function storedZip(parts: Map<string, Buffer>): Promise<Buffer> {
  const { zipSync } = await import('fflate');
  const files: Record<string, [Uint8Array, { level: 0 }]> = {};
  for (const [name, data] of parts) files[name] = [data, { level: 0 }];
  const zipped = zipSync(files);
  return Buffer.from(zipped.buffer, zipped.byteOffset, zipped.byteLength);
}
