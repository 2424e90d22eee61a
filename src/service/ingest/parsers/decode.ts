import { TextDecoder } from 'node:util';
import { parseFailed } from '../parse-error.js';

/**
 * Which encoding a text file is read in. A byte order mark decides first (UTF-8, UTF-16LE/BE);
 * then the encoding the file declares (XML's prolog, HTML's `<meta charset>`), when its format has
 * one; else UTF-8. Decoding is strict: bytes that are not valid in the encoding fail the file
 * (`parse_failed`) rather than being stored as U+FFFD.
 */

/** An encoding a file names for itself, and where it does (for the error text). */
export type DeclaredEncoding = { label: string; where: string };

/** How a format finds its declared encoding in its first bytes, and what a user can do about bad bytes. */
export type EncodingRules = {
  declared?: (head: Buffer) => DeclaredEncoding | undefined;
  /** Appended to "save the file as UTF-8": how else the format can say its encoding. */
  hint?: string;
};

export type StrictDecoder = {
  /** The encoding's WHATWG name (`utf-8`, `windows-1251`, `shift_jis`). */
  readonly encoding: string;
  /** Decodes the next bytes (`bytesBefore`: how many came before them in the file), failing on invalid ones. */
  decode(bytes: Buffer, bytesBefore: number): string;
  /** The end of the input: a character cut off by the end fails too. */
  end(bytesBefore: number): string;
};

function bomEncoding(head: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}

function decoderFor(declared: DeclaredEncoding): TextDecoder {
  try {
    return new TextDecoder(declared.label, { fatal: true });
  } catch {
    throw parseFailed(
      `${declared.where} names the encoding "${declared.label}", which kbsync cannot decode; save the file as UTF-8 and upload it again`,
    );
  }
}

/** A strict decoder for a file whose first bytes are `head`. */
export function createStrictDecoder(head: Buffer, rules: EncodingRules = {}): StrictDecoder {
  const bom = bomEncoding(head);
  let declared = bom === undefined ? rules.declared?.(head) : undefined;
  // A file that declares UTF-16 but has no byte order mark was read as ASCII to find the declaration: it is not UTF-16.
  if (declared !== undefined && /^utf-?16/i.test(declared.label)) declared = undefined;
  const decoder = declared === undefined ? new TextDecoder(bom ?? 'utf-8', { fatal: true }) : decoderFor(declared);
  let tail: Buffer = Buffer.alloc(0);
  const fail = (bytes: Buffer, bytesBefore: number): Error => {
    if (decoder.encoding === 'utf-8') {
      const at = firstInvalidUtf8(Buffer.concat([tail, bytes]), bytesBefore - tail.length, tail.length);
      return parseFailed(
        declared === undefined
          ? `not valid UTF-8 (byte offset ${at}); save the file as UTF-8${rules.hint ?? ''} and upload it again`
          : `not valid UTF-8 (byte offset ${at}), the encoding ${declared.where} declares; save the file as UTF-8 and upload it again`,
      );
    }
    const what = declared === undefined ? decoder.encoding.toUpperCase() : `${declared.label}, the encoding ${declared.where} declares`;
    return parseFailed(
      `not valid ${what} (near byte offset ${bytesBefore + firstFailingPrefix(decoder.encoding, bytes)}); correct the declaration or save the file as UTF-8, and upload it again`,
    );
  };
  return {
    encoding: decoder.encoding,
    decode(bytes, bytesBefore) {
      try {
        const text = decoder.decode(bytes, { stream: true });
        tail = bytes.subarray(Math.max(0, bytes.length - 3));
        return text;
      } catch {
        throw fail(bytes, bytesBefore);
      }
    },
    end(bytesBefore) {
      try {
        return decoder.decode();
      } catch {
        throw fail(Buffer.alloc(0), bytesBefore);
      }
    },
  };
}

/** The length of the shortest prefix of `bytes` a fresh decoder refuses (an approximate place for non-UTF-8 encodings). */
function firstFailingPrefix(encoding: string, bytes: Buffer): number {
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    try {
      new TextDecoder(encoding, { fatal: true }).decode(bytes.subarray(0, mid + 1), { stream: true });
      lo = mid + 1;
    } catch {
      hi = mid;
    }
  }
  return lo;
}

/**
 * The file offset of the first byte that is not valid UTF-8 in `bytes`, which start `base` bytes
 * into the file; their first `carried` bytes were already decoded and may begin inside a character.
 */
export function firstInvalidUtf8(bytes: Uint8Array, base: number, carried = 0): number {
  let i = 0;
  while (i < carried && ((bytes[i] as number) & 0xc0) === 0x80) i++;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    const [len, min, max] =
      b < 0x80
        ? [1, 0, 0]
        : b < 0xc2
          ? [0, 0, 0]
          : b < 0xe0
            ? [2, 0x80, 0xbf]
            : b < 0xf0
              ? [3, b === 0xe0 ? 0xa0 : 0x80, b === 0xed ? 0x9f : 0xbf]
              : b < 0xf5
                ? [4, b === 0xf0 ? 0x90 : 0x80, b === 0xf4 ? 0x8f : 0xbf]
                : [0, 0, 0];
    if (len === 0) return base + i;
    if (len > 1) {
      if (i + len > bytes.length) return base + i;
      const second = bytes[i + 1] as number;
      if (second < min || second > max) return base + i;
      for (let k = 2; k < len; k++) if (((bytes[i + k] as number) & 0xc0) !== 0x80) return base + i;
    }
    i += len;
  }
  return base + bytes.length;
}

const XML_DECLARATION = /^<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/;

/** The encoding an XML declaration (`<?xml version="1.0" encoding="windows-1251"?>`) names, if any. */
export function xmlDeclaredEncoding(head: Buffer): DeclaredEncoding | undefined {
  const label = XML_DECLARATION.exec(head.toString('latin1', 0, 1024))?.[1];
  return label === undefined ? undefined : { label, where: 'its XML declaration' };
}

const META_CHARSET = /<meta\s[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i;

/**
 * The encoding an HTML page declares in its head: `<meta charset="...">` or
 * `<meta http-equiv="Content-Type" content="text/html; charset=...">` (both match the `charset=`).
 */
export function htmlDeclaredEncoding(head: Buffer): DeclaredEncoding | undefined {
  let text = head.toString('latin1', 0, 64 * 1024);
  const body = text.search(/<body[\s>]/i);
  if (body >= 0) text = text.slice(0, body);
  const label = META_CHARSET.exec(text.replace(/<!--[\s\S]*?-->/g, ''))?.[1];
  return label === undefined ? undefined : { label, where: 'its <meta charset>' };
}
