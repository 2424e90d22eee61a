import { createReadStream } from 'node:fs';
import { TextDecoder } from 'node:util';
import { parseFailed } from './parse-error.js';

/** A line longer than this fails the file instead of growing memory without bound. */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;
const SNIFF_CHARS = 64 * 1024;

function encodingOf(head: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' {
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

/**
 * The file's text in decoded pieces, streamed. UTF-8 by default; a UTF-16 byte order mark switches
 * to UTF-16; any BOM is dropped; invalid UTF-8 bytes become U+FFFD. A NUL character near the start
 * means the file is not text, which fails it rather than indexing binary noise.
 */
export async function* readText(path: string): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined;
  let sniffed = 0;
  for await (const buf of createReadStream(path, { highWaterMark: 256 * 1024 })) {
    const bytes = buf as Buffer;
    decoder ??= new TextDecoder(encodingOf(bytes));
    const text = decoder.decode(bytes, { stream: true });
    if (sniffed < SNIFF_CHARS) {
      const nul = text.slice(0, SNIFF_CHARS - sniffed).indexOf('\u0000');
      if (nul >= 0) throw parseFailed(`not a text file: NUL character at offset ${sniffed + nul} (binary data, or UTF-16 without a byte order mark)`);
      sniffed += text.length;
    }
    if (text.length > 0) yield text;
  }
  const rest = decoder?.decode() ?? '';
  if (rest.length > 0) yield rest;
}

/** The file's lines (without their CRLF, LF or CR ending), numbered from 1, streamed. */
export async function* readLines(path: string): AsyncGenerator<{ line: string; lineNo: number }> {
  let pending = '';
  let lineNo = 0;
  for await (const piece of readText(path)) {
    pending += piece;
    const eol = /\r\n|\r|\n/g;
    let start = 0;
    for (let m = eol.exec(pending); m !== null; m = eol.exec(pending)) {
      // A CR at the very end may be the first half of a CRLF split across reads: wait for more.
      if (m[0] === '\r' && m.index === pending.length - 1) break;
      yield { line: pending.slice(start, m.index), lineNo: ++lineNo };
      start = eol.lastIndex;
    }
    pending = pending.slice(start);
    if (pending.length > MAX_LINE_CHARS) throw parseFailed(`line ${lineNo + 1}: longer than ${MAX_LINE_CHARS} characters`);
  }
  if (pending.endsWith('\r')) pending = pending.slice(0, -1);
  if (pending.length > 0) yield { line: pending, lineNo: ++lineNo };
}
