import { createReadStream } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parseFailed } from './parse-error.js';
import { createStrictDecoder, type EncodingRules, type StrictDecoder } from './parsers/decode.js';

/** A line longer than this fails the file instead of growing memory without bound. */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;
/** Bytes read (and handed on) at a time: the most text a parser works through before the event loop gets a turn. */
export const READ_PIECE_BYTES = 128 * 1024;
const SNIFF_CHARS = 64 * 1024;

/**
 * The file's text in decoded pieces, streamed. UTF-8 by default; a byte order mark (UTF-8, UTF-16LE
 * or BE) or an encoding the format lets the file declare (`rules`, decode.ts) decides otherwise; any
 * BOM is dropped. Bytes not valid in the encoding fail the file naming their offset, never become
 * U+FFFD. A NUL character near the start means the file is not text, which fails it rather than
 * indexing binary noise.
 *
 * Before reading on it yields to the event loop: the read-ahead is usually already buffered, so
 * without that a consumer's work on piece after piece would run as one long synchronous stretch.
 */
export async function* readText(path: string, rules?: EncodingRules): AsyncGenerator<string> {
  let decoder: StrictDecoder | undefined;
  let sniffed = 0;
  let bytesRead = 0;
  for await (const buf of createReadStream(path, { highWaterMark: READ_PIECE_BYTES })) {
    const bytes = buf as Buffer;
    decoder ??= createStrictDecoder(bytes, rules);
    const text = decoder.decode(bytes, bytesRead);
    bytesRead += bytes.length;
    if (sniffed < SNIFF_CHARS) {
      const nul = text.slice(0, SNIFF_CHARS - sniffed).indexOf('\u0000');
      if (nul >= 0)
        throw parseFailed(
          `not a text file: NUL character at offset ${sniffed + nul} (binary data, or UTF-16 without a byte order mark); upload text saved as UTF-8 (or UTF-16 with a byte order mark)`,
        );
      sniffed += text.length;
    }
    if (text.length > 0) yield text;
    await nextTurn();
  }
  const rest = decoder?.end(bytesRead) ?? '';
  if (rest.length > 0) yield rest;
}

export type LineSplitter = {
  /** The lines completed by this piece of text (without their CRLF, LF or CR ending). */
  push(piece: string): string[];
  /** The last line, if the text did not end with a line ending. */
  end(): string[];
  /** How many lines have been handed out so far. */
  readonly lineCount: number;
};

const LF = 0x0a;
const CR = 0x0d;
const ANY_EOL = /\r\n|\r|\n/;

/**
 * Cuts streamed text into lines at CRLF, LF or CR, a piece at a time. A CR that ends a piece may be
 * the first half of a CRLF split across pieces: its line is held back until the next piece shows
 * (or the end, where an empty last line ended by CR alone is dropped). Work is linear in the text:
 * a long line is collected in parts and joined once, not rescanned on every piece.
 */
export function createLineSplitter(): LineSplitter {
  let parts: string[] = [];
  let partChars = 0;
  /** A line ended by a CR that was the last character of the previous piece. */
  let crLine: string | undefined;
  let lineCount = 0;

  const takePartial = (tail: string): string => {
    if (parts.length === 0) return tail;
    parts.push(tail);
    const line = parts.join('');
    parts = [];
    partChars = 0;
    return line;
  };

  return {
    push(piece) {
      const out: string[] = [];
      if (piece.length === 0) return out;
      let start = 0;
      if (crLine !== undefined) {
        out.push(crLine);
        crLine = undefined;
        if (piece.charCodeAt(0) === LF) start = 1;
      }
      const endsWithCr = piece.charCodeAt(piece.length - 1) === CR;
      const end = endsWithCr ? piece.length - 1 : piece.length;
      const text = start === 0 && end === piece.length ? piece : piece.slice(start, end);
      const cut = text.indexOf('\r') < 0 ? text.split('\n') : text.split(ANY_EOL);
      const last = cut.length - 1;
      if (last === 0) {
        const only = cut[0] as string;
        if (endsWithCr) crLine = takePartial(only);
        else if (only.length > 0) {
          parts.push(only);
          partChars += only.length;
        }
      } else {
        out.push(takePartial(cut[0] as string));
        for (let i = 1; i < last; i++) out.push(cut[i] as string);
        const tail = cut[last] as string;
        if (endsWithCr) crLine = tail;
        else if (tail.length > 0) {
          parts.push(tail);
          partChars = tail.length;
        }
      }
      lineCount += out.length;
      const pending = crLine === undefined ? partChars : crLine.length + 1;
      if (pending > MAX_LINE_CHARS)
        throw parseFailed(
          `line ${lineCount + 1}: longer than ${MAX_LINE_CHARS} characters; break it into shorter lines and upload the file again`,
        );
      return out;
    },
    end() {
      const line = crLine ?? takePartial('');
      crLine = undefined;
      if (line.length === 0) return [];
      lineCount++;
      return [line];
    },
    get lineCount() {
      return lineCount;
    },
  };
}

/** The file's lines (without their CRLF, LF or CR ending) in batches as they are read; `firstLineNo` counts from 1. */
export async function* readLineBatches(path: string): AsyncGenerator<{ lines: string[]; firstLineNo: number }> {
  const splitter = createLineSplitter();
  for await (const piece of readText(path)) {
    const firstLineNo = splitter.lineCount + 1;
    const lines = splitter.push(piece);
    if (lines.length > 0) yield { lines, firstLineNo };
  }
  const firstLineNo = splitter.lineCount + 1;
  const lines = splitter.end();
  if (lines.length > 0) yield { lines, firstLineNo };
}
