import { describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../src/shared/errors.js';
import { createLineSplitter, MAX_LINE_CHARS, READ_PIECE_BYTES, readLineBatches } from '../../../src/service/ingest/read-text.js';
import { tempFile } from './test-support.js';

/** The lines of text fed to a splitter in pieces cut at `cuts`. */
function split(text: string, cuts: number[] = []): string[] {
  const splitter = createLineSplitter();
  const out: string[] = [];
  let from = 0;
  for (const at of [...cuts, text.length]) {
    out.push(...splitter.push(text.slice(from, at)));
    from = at;
  }
  out.push(...splitter.end());
  return out;
}

describe('createLineSplitter', () => {
  it.each([
    ['LF, CRLF and CR endings', 'a\nb\r\nc\rd', ['a', 'b', 'c', 'd']],
    ['a final line ending', 'a\nb\n', ['a', 'b']],
    ['blank lines', '\n\na\n\n', ['', '', 'a', '']],
    ['an empty last line ended by CR alone, dropped', 'a\r\r', ['a']],
    ['no text', '', []],
  ])('cuts %s', (_label, text, lines) => {
    expect(split(text)).toEqual(lines);
  });

  it('gives the same lines wherever the pieces are cut, a CRLF split between two pieces included', () => {
    const text = 'one\r\ntwo\rthree\n\r\nfour\r\r\nfive';
    const whole = split(text);

    for (let a = 0; a <= text.length; a++) {
      for (let b = a; b <= text.length; b++) expect(split(text, [a, b])).toEqual(whole);
    }
    expect(whole).toEqual(['one', 'two', 'three', '', 'four', '', 'five']);
  });

  it('joins a long line that spans many pieces', () => {
    const long = 'x'.repeat(50_000);
    const cuts = Array.from({ length: 49 }, (_, i) => (i + 1) * 1000);

    expect(split(`${long}\nend`, cuts)).toEqual([long, 'end']);
  });

  it('counts lines and fails a line longer than MAX_LINE_CHARS, naming it', () => {
    const splitter = createLineSplitter();
    splitter.push('a\nb\n');
    const piece = 'y'.repeat(1024 * 1024);
    let err: unknown;
    try {
      for (let i = 0; i <= MAX_LINE_CHARS / piece.length; i++) splitter.push(piece);
    } catch (e) {
      err = e;
    }

    expect(splitter.lineCount).toBe(2);
    expect(isKbsyncError(err, 'parse_failed')).toBe(true);
    expect((err as Error).message).toBe(
      `line 3: longer than ${MAX_LINE_CHARS} characters; break it into shorter lines and upload the file again`,
    );
  });
});

describe('readLineBatches', () => {
  it('numbers lines across the pieces of a file larger than one read', async () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `line ${i + 1}`);
    const f = tempFile('a.txt', `${lines.join('\r\n')}\r\n`);
    try {
      const batches: { lines: string[]; firstLineNo: number }[] = [];
      for await (const batch of readLineBatches(f.path)) batches.push(batch);

      expect(lines.join('\n').length).toBeGreaterThan(2 * READ_PIECE_BYTES);
      expect(batches.length).toBeGreaterThan(2);
      expect(batches.flatMap((b) => b.lines)).toEqual(lines);
      for (const b of batches) expect(b.lines[0]).toBe(`line ${b.firstLineNo}`);
    } finally {
      f.cleanup();
    }
  });
});
