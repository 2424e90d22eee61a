import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import { chunkDocument, DEFAULT_CHUNK_OPTIONS } from './chunker.js';
import type { Section } from './types.js';

const BUDGET = DEFAULT_CHUNK_OPTIONS.maxTokens as number;
const tokens = (text: string): number => countTokens(text);

// Deterministic filler of several kinds, some much denser in tokens than English prose.
function prose(n: number): string {
  const words = 'the tide turns under the harbor lantern while the archive keeps its copper ledger of signals'.split(' ');
  return Array.from({ length: n }, (_, i) => `${words[i % words.length]}${i % 11 === 10 ? '.' : ''}`).join(' ');
}
const digits = (n: number): string => Array.from({ length: n }, (_, i) => String((i * 7919) % 100003)).join(',');
const cjk = (n: number): string => Array.from({ length: n }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 131) % 20000))).join('');
const base64ish = (n: number): string => Array.from({ length: n }, (_, i) => 'A9zQ+/k3Lm'[(i * 7) % 10]).join('');
const emoji = (n: number): string => Array.from({ length: n }, (_, i) => String.fromCodePoint(0x1f600 + (i % 60))).join('');

describe('chunks within the token budget (cl100k_base)', () => {
  it.each([
    ['English prose', prose(3000)],
    ['comma-separated numbers', digits(3000)],
    ['CJK text with no spaces', cjk(4000)],
    ['one base64-like word', base64ish(12000)],
    ['emoji (surrogate pairs)', emoji(3000)],
  ])('%s: no chunk over the budget, every chunk starts with the heading path, no text lost', (_name, text) => {
    const chunks = chunkDocument({ sections: [{ heading: 'Guide > Data', text }] });

    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(tokens(chunk)).toBeLessThanOrEqual(BUDGET);
      expect(chunk.startsWith('Guide > Data\n')).toBe(true);
      expect(chunk).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    }
    const bodies = chunks.map((c) => c.slice('Guide > Data\n'.length)).join('');
    for (const piece of text.split(/\s+/).filter((w) => w.length > 0 && w.length < 20)) expect(bodies).toContain(piece);
  });

  it('English prose fills chunks of about 300 tokens up to the budget', () => {
    const chunks = chunkDocument({ sections: [{ heading: 'Guide', text: prose(6000).replace(/\. /g, '.\n\n') }] });

    const sizes = chunks.slice(0, -1).map(tokens);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(250);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(BUDGET);
  });

  it.each([
    ['numbers', () => digits(400)],
    ['CJK', () => cjk(600)],
    ['emoji', () => emoji(300)],
  ])('a file of prose whose later sections turn dense (%s): no chunk over the budget, counted or estimated', (_name, dense) => {
    const sections: Section[] = [];
    for (let i = 0; i < 40; i++) sections.push({ heading: `Part ${i}`, text: i < 30 ? prose(300) : `${prose(20)}\n\n${dense()}` });

    const chunks = chunkDocument({ sections });

    expect(chunks.length).toBeGreaterThan(40);
    for (const chunk of chunks) expect(tokens(chunk)).toBeLessThanOrEqual(BUDGET);
  });

  it('rows of a dense table keep their column names and stay whole, every chunk within budget', () => {
    const records = Array.from(
      { length: 400 },
      (_, i) =>
        `id: ${i}; amount: ${(i * 1337.17).toFixed(2)}; sku: X${(i * 7919) % 100003}-${i % 97}; date: 2026-0${(i % 9) + 1}-1${i % 10}`,
    );
    const section: Section = { heading: 'orders.csv', records };

    const chunks = chunkDocument({ sections: [section] });

    expect(chunks.length).toBeGreaterThan(1);
    const rows: string[] = [];
    for (const chunk of chunks) {
      expect(tokens(chunk)).toBeLessThanOrEqual(BUDGET);
      const [heading, ...lines] = chunk.split('\n');
      expect(heading).toBe('orders.csv');
      for (const line of lines) expect(line).toMatch(/^id: \d+; amount: [\d.]+; sku: X\d+-\d+; date: 2026-\d\d-\d\d$/);
      rows.push(...lines);
    }
    expect(rows).toEqual(records);
  });

  it('a heading path too long in tokens is cut to a third of the budget', () => {
    const heading = cjk(600);

    const chunks = chunkDocument({ sections: [{ heading, text: prose(50) }] });

    expect(chunks).toHaveLength(1);
    const shown = (chunks[0] as string).split('\n')[0] as string;
    expect(shown.endsWith('…')).toBe(true);
    expect(tokens(shown)).toBeLessThanOrEqual(BUDGET / 3);
  });

  it('a smaller maxTokens is obeyed with the same character packing', () => {
    const chunks = chunkDocument({ sections: [{ text: digits(2000) }] }, { maxChars: 1500, overlapChars: 0, maxTokens: 120 });

    for (const chunk of chunks) expect(tokens(chunk)).toBeLessThanOrEqual(120);
    expect(chunks.length).toBeGreaterThan(1);
    // No space to cut at: plain cuts, nothing lost or repeated.
    expect(chunks.join('')).toBe(digits(2000));
  });
});
