import { TextDecoder } from 'node:util';

/** The WHATWG encoding for a Windows code page number (`\ansicpg`, `\cpg`), or undefined when Node has none. */
export function codePageEncoding(cp: number): string | undefined {
  if ((cp >= 1250 && cp <= 1258) || cp === 874) return `windows-${cp}`;
  const named: Record<number, string> = {
    932: 'shift_jis',
    936: 'gbk',
    949: 'euc-kr',
    950: 'big5',
    866: 'ibm866',
    10000: 'macintosh',
    10007: 'x-mac-cyrillic',
    20866: 'koi8-r',
    21866: 'koi8-u',
    20932: 'euc-jp',
    54936: 'gb18030',
    65001: 'utf-8',
  };
  if (named[cp] !== undefined) return named[cp];
  if (cp >= 28591 && cp <= 28606) return `iso-8859-${cp - 28590}`;
  return undefined;
}

/** The code page a font's `\fcharsetN` implies ([MS-RTF] fcharset table); undefined for ANSI default and symbol fonts. */
export function charsetCodePage(charset: number): number | undefined {
  const table: Record<number, number> = {
    0: 1252,
    77: 10000,
    128: 932,
    129: 949,
    134: 936,
    136: 950,
    161: 1253,
    162: 1254,
    163: 1258,
    177: 1255,
    178: 1256,
    186: 1257,
    204: 1251,
    222: 874,
    238: 1250,
    254: 437,
    255: 437,
  };
  return table[charset];
}

const decoders = new Map<string, TextDecoder>();

/**
 * Bytes of text in `encoding`, decoded. A byte sequence the encoding cannot read (or an encoding Node
 * lacks) is read as windows-1252 instead, byte by byte, so no replacement character is ever written.
 */
export function decodeBytes(bytes: Uint8Array, encoding: string | undefined): string {
  if (encoding !== undefined) {
    let decoder = decoders.get(encoding);
    if (decoder === undefined) {
      try {
        decoder = new TextDecoder(encoding, { fatal: true });
      } catch {
        decoder = undefined;
      }
      if (decoder !== undefined) decoders.set(encoding, decoder);
    }
    if (decoder !== undefined) {
      try {
        return decoder.decode(bytes);
      } catch {
        // Not valid in that code page: fall through to windows-1252.
      }
    }
  }
  let fallback = decoders.get('windows-1252');
  if (fallback === undefined) {
    fallback = new TextDecoder('windows-1252');
    decoders.set('windows-1252', fallback);
  }
  return fallback.decode(bytes);
}
