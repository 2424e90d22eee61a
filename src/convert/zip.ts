import { crc32, inflateRawSync } from 'node:zlib';
import type { Entry, ZipFile } from 'yauzl';
import { aFormat, encrypted, failed, sizeText } from './failure.js';
import type { ConvertLimits } from './types.js';

/** The first bytes of an OLE2/CFB container: what Office writes for a password-protected OOXML file (and old binary files). */
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
/** The stream name (UTF-16LE in the CFB directory) that holds an encrypted OOXML package. */
const ENCRYPTED_PACKAGE = Buffer.from('EncryptedPackage', 'utf16le');

export const isCfb = (bytes: Uint8Array): boolean => bytes.length >= CFB_MAGIC.length && CFB_MAGIC.every((b, i) => bytes[i] === b);

/** The parts of one zip container, read within the limits: names first, each part inflated when asked. */
export type ZipParts = {
  has(name: string): boolean;
  /** The part inflated, or undefined when the archive has no such entry. */
  read(name: string): Promise<Buffer | undefined>;
  /** The part as UTF-8 text (a BOM dropped), or undefined. */
  text(name: string): Promise<string | undefined>;
  close(): void;
};

/** What yauzl's complaint about a damaged archive means, in a sentence naming the part. */
function zipProblem(format: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/end of central directory record signature not found/i.test(message)) {
    return `the ${format} file's zip central directory is missing: the file is truncated or not ${aFormat(format)}`;
  }
  return `the ${format} file's zip archive is damaged (${message}): the file is truncated or corrupt`;
}

/**
 * Opens `bytes` as the zip container of a `format` document. Refused before anything is inflated: an
 * OLE2 file (an encrypted OOXML package is `encrypted`, anything else is not this format), more entries
 * than `maxEntries`, or declared sizes past `maxExpandedBytes` in all for the parts `readable` admits (the
 * only ones the converter may inflate: a deck's video or a book's images are never read, so they do not
 * count). While inflating, the bytes are counted against the same limit, so a header that lies about its
 * size is still stopped.
 */
export async function openZip(
  bytes: Uint8Array,
  format: string,
  limits: ConvertLimits,
  readable: (name: string) => boolean,
): Promise<ZipParts> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isCfb(buffer)) {
    if (buffer.includes(ENCRYPTED_PACKAGE)) {
      throw encrypted(`the ${format} file is password-protected (an encrypted OOXML package); remove the password and save it again`);
    }
    throw failed(`the file is an OLE2 (binary Office) file, not ${aFormat(format)}: save it as ${format} or give it its own extension`);
  }
  const { default: yauzl } = await import('yauzl');
  let zip: ZipFile;
  try {
    zip = await new Promise<ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(buffer, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false }, (err, z) =>
        err ? reject(err) : resolve(z),
      ),
    );
  } catch (err) {
    throw failed(zipProblem(format, err));
  }
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw failed(
      `the ${format} zip holds ${zip.entryCount} entries, past the limit of ${limits.maxEntries}: a zip bomb, or raise maxEntries`,
    );
  }
  let entries: Entry[];
  try {
    entries = await readEntries(zip);
  } catch (err) {
    zip.close();
    throw failed(zipProblem(format, err));
  }
  const byName = new Map<string, Entry>();
  // Part names are case-insensitive in OOXML (OPC) packages: a relationship may spell one otherwise.
  const byLowerName = new Map<string, Entry>();
  let declared = 0;
  for (const e of entries) {
    if (e.fileName.endsWith('/') || !readable(e.fileName) || byName.has(e.fileName)) continue;
    declared += e.uncompressedSize;
    byName.set(e.fileName, e);
    if (!byLowerName.has(e.fileName.toLowerCase())) byLowerName.set(e.fileName.toLowerCase(), e);
  }
  const entryOf = (name: string): Entry | undefined => byName.get(name) ?? byLowerName.get(name.toLowerCase());
  if (declared > limits.maxExpandedBytes) {
    zip.close();
    throw failed(
      `the ${format} zip declares ${sizeText(declared)} uncompressed, past the limit of ${sizeText(limits.maxExpandedBytes)}: a zip bomb, or raise maxExpandedBytes`,
    );
  }
  let inflated = 0;
  const read = async (name: string): Promise<Buffer | undefined> => {
    const entry = entryOf(name);
    if (entry === undefined) return undefined;
    if (entry.isEncrypted()) throw encrypted(`the ${format} file's part ${name} is encrypted; remove the password and save it again`);
    const data = inflateEntry(buffer, entry, format);
    inflated += data.length;
    if (inflated > limits.maxExpandedBytes) {
      throw failed(
        `the ${format} part ${name} expands past the limit of ${sizeText(limits.maxExpandedBytes)} for the whole file: a zip bomb, or raise maxExpandedBytes`,
      );
    }
    return data;
  };
  return {
    has: (name) => entryOf(name) !== undefined,
    read,
    text: async (name) => {
      const data = await read(name);
      if (data === undefined) return undefined;
      return new TextDecoder('utf-8', { ignoreBOM: false }).decode(data);
    },
    close: () => zip.close(),
  };
}

/**
 * One entry's bytes, inflated in one synchronous call (zlib's streams wait on the thread pool for each
 * small part) that stops one byte past the size the central directory declares: a part that inflates
 * further is refused, so the declared sizes checked before bound what is inflated.
 */
function inflateEntry(zipBytes: Buffer, entry: Entry, format: string): Buffer {
  const name = entry.fileName;
  const at = entry.relativeOffsetOfLocalHeader;
  if (at + 30 > zipBytes.length || zipBytes.readUInt32LE(at) !== 0x04034b50) {
    throw failed(`the ${format} file's part ${name} is damaged (its local header is missing): the file is truncated or corrupt`);
  }
  const start = at + 30 + zipBytes.readUInt16LE(at + 26) + zipBytes.readUInt16LE(at + 28);
  const end = start + entry.compressedSize;
  if (end > zipBytes.length) throw failed(`the ${format} file's part ${name} is cut short: the file is truncated`);
  const raw = zipBytes.subarray(start, end);
  let data: Buffer;
  if (entry.compressionMethod === 0) data = Buffer.from(raw);
  else if (entry.compressionMethod === 8) {
    try {
      data = inflateRawSync(raw, { maxOutputLength: entry.uncompressedSize + 1 });
    } catch (err) {
      if (err instanceof RangeError) {
        throw failed(`the ${format} part ${name} inflates past the size its zip header declares: a zip bomb, or a damaged file`);
      }
      throw failed(
        `the ${format} file's part ${name} is damaged (${err instanceof Error ? err.message : String(err)}): the file is truncated or corrupt`,
      );
    }
  } else
    throw failed(
      `the ${format} file's part ${name} uses zip compression method ${entry.compressionMethod}, which ${format} files do not use`,
    );
  if (data.length > entry.uncompressedSize) {
    throw failed(`the ${format} part ${name} inflates past the size its zip header declares: a zip bomb, or a damaged file`);
  }
  if (data.length < entry.uncompressedSize || crc32(data) !== entry.crc32) {
    throw failed(
      `the ${format} file's part ${name} is damaged (its size or checksum does not match the zip's): the file is truncated or corrupt`,
    );
  }
  return data;
}

function readEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', reject);
    zip.readEntry();
  });
}

/** A zip part's path resolved against the part that names it (`ppt/slides/slide1.xml` + `../notesSlides/n.xml`). */
export function resolvePart(from: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = from.split('/').slice(0, -1);
  for (const piece of safeDecode(target).split('/')) {
    if (piece === '..') parts.pop();
    else if (piece !== '.' && piece !== '') parts.push(piece);
  }
  return parts.join('/');
}

function safeDecode(uri: string): string {
  try {
    return decodeURIComponent(uri);
  } catch {
    return uri;
  }
}
