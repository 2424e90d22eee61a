import { describe, expect, it } from 'vitest';
import { convertDoc } from './doc.js';
import { convertEpub } from './epub.js';
import { convertOdp, convertOds, convertOdt } from './odf.js';
import { convertPptx } from './pptx.js';
import { convertRtf } from './rtf.js';
import { DEFAULT_CONVERT_LIMITS, type Converter } from './types.js';
import { fixture } from './zip.test-util.js';

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CASES: [string, Converter, string][] = [
  ['PPTX', convertPptx, 'deck-pandoc.pptx'],
  ['DOC', convertDoc, 'report.doc'],
  ['ODT', convertOdt, 'report.odt'],
  ['ODS', convertOds, 'budget.ods'],
  ['ODP', convertOdp, 'deck.odp'],
  ['RTF', convertRtf, 'report.rtf'],
  ['EPUB', convertEpub, 'book-epub3.epub'],
];

describe.each(CASES)('%s: damaged bytes never throw', (format, convert, name) => {
  it('returns a result for each of 60 corrupted copies (bytes overwritten, cut, or spliced)', async () => {
    const original = fixture(name);
    const next = random(format.length * 7919);
    const outcomes = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const bytes = new Uint8Array(original);
      const kind = i % 3;
      if (kind === 0)
        for (let k = 0; k < 1 + Math.floor(next() * 40); k++) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      const input = kind === 1 ? bytes.slice(0, Math.floor(next() * bytes.length)) : kind === 2 ? spliced(bytes, next) : bytes;
      const r = await convert(input, { name, limits: DEFAULT_CONVERT_LIMITS });
      if (r.ok) {
        expect(r.markdown.endsWith('\n')).toBe(true);
        expect(r.markdown).not.toContain('\ufffd');
        outcomes.add('ok');
      } else {
        // A sentence naming the format and what is wrong, never the converter's own failure.
        expect(r.reason).toMatch(new RegExp(`^the (${format}|OLE2|file)`));
        expect(r.reason).not.toMatch(/damaged or not an? [A-Z]+ file \(/);
        outcomes.add(r.skip);
      }
    }
    expect(outcomes.size).toBeGreaterThan(0);
  });
});

/** The bytes with a random stretch moved to another place (a damaged copy's shape). */
function spliced(bytes: Uint8Array, next: () => number): Uint8Array {
  const from = Math.floor(next() * bytes.length);
  const length = Math.floor(next() * 2000);
  const piece = bytes.slice(from, from + length);
  const to = Math.floor(next() * bytes.length);
  const out = new Uint8Array(bytes.length + piece.length);
  out.set(bytes.subarray(0, to));
  out.set(piece, to);
  out.set(bytes.subarray(to), to + piece.length);
  return out;
}
