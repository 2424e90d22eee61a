import { describe, expect, it } from 'vitest';
import { chunkDocument, chunkSections } from './chunker.js';
import type { Section } from './types.js';

const opts = { maxChars: 100, overlapChars: 30 };
const words = (n: number, stem = 'w'): string => Array.from({ length: n }, (_, i) => `${stem}${i}`).join(' ');
const wordsOf = (text: string): string[] => text.split(/\s+/).filter((w) => w !== '');

describe('chunkDocument', () => {
  it('keeps a short section whole, heading first', () => {
    const chunks = chunkDocument({ sections: [{ heading: 'Guide > Install', text: 'Para one.\n\nPara two.' }] }, opts);

    expect(chunks).toEqual(['Guide > Install\nPara one.\n\nPara two.']);
  });

  it('never packs two sections into one chunk', () => {
    const chunks = chunkDocument({ sections: [{ heading: 'A', text: 'alpha' }, { heading: 'B', text: 'beta' }, { text: 'gamma' }] }, opts);

    expect(chunks).toEqual(['A\nalpha', 'B\nbeta', 'gamma']);
  });

  it('packs whole paragraphs and splits between them', () => {
    const p1 = 'a'.repeat(40);
    const p2 = 'b'.repeat(40);
    const p3 = 'c'.repeat(40);

    const chunks = chunkDocument({ sections: [{ text: [p1, p2, p3].join('\n\n') }] }, { maxChars: 100, overlapChars: 0 });

    expect(chunks).toEqual([`${p1}\n\n${p2}`, p3]);
  });

  it('splits a long paragraph at sentence ends, never inside a word, and every chunk fits', () => {
    const text = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} says something.`).join(' ');

    const chunks = chunkDocument({ sections: [{ heading: 'H', text }] }, opts);

    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(100);
      expect(c.startsWith('H\n')).toBe(true);
      expect(c.endsWith('says something.')).toBe(true);
      for (const w of wordsOf(c.slice(2))) expect(text.split(' ')).toContain(w);
    }
  });

  it('overlaps consecutive prose chunks by at most overlapChars, starting at a word', () => {
    const text = words(120);

    const chunks = chunkDocument({ sections: [{ text }] }, opts);

    for (let i = 1; i < chunks.length; i++) {
      const prev = chunks[i - 1] as string;
      const cur = chunks[i] as string;
      let shared = '';
      for (let n = Math.min(prev.length, cur.length); n > 0; n--) {
        if (prev.endsWith(cur.slice(0, n))) {
          shared = cur.slice(0, n);
          break;
        }
      }
      expect(shared.length).toBeGreaterThan(0);
      expect(shared.length).toBeLessThanOrEqual(30);
      expect(wordsOf(text)).toContain(wordsOf(shared)[0]);
    }
    expect(wordsOf(chunks.join(' '))).toEqual(expect.arrayContaining(wordsOf(text)));
  });

  it('cuts a word only when it alone is longer than a chunk', () => {
    const blob = 'x'.repeat(250);

    const chunks = chunkDocument({ sections: [{ text: `short words here ${blob} tail` }] }, { maxChars: 100, overlapChars: 0 });

    expect(chunks).toEqual(['short words here', 'x'.repeat(100), 'x'.repeat(100), `${'x'.repeat(50)} tail`]);
  });

  it('does not split a surrogate pair when it must cut', () => {
    const chunks = chunkDocument({ sections: [{ text: '😀'.repeat(60) }] }, { maxChars: 65, overlapChars: 0 });

    expect(chunks.join('')).toBe('😀'.repeat(60));
    for (const c of chunks) expect(c).not.toMatch(/[\uD800-\uDBFF]$/);
  });

  it('packs whole records with no overlap, splitting a record only when it alone is too long', () => {
    const records = Array.from({ length: 6 }, (_, i) => `id: ${i}; name: record number ${i}`);
    const long = Array.from({ length: 8 }, (_, i) => `field${i}: ${'v'.repeat(20)}`).join('\n');

    const chunks = chunkDocument({ sections: [{ records: [...records, long] }] }, opts);

    expect(chunks.slice(0, 2)).toEqual([records.slice(0, 3).join('\n'), records.slice(3, 6).join('\n')]);
    expect(chunks.slice(2).join('\n')).toBe(long);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(100);
  });

  it('packs across sections that continue the previous one', () => {
    const sections: Section[] = [{ records: ['r1', 'r2'] }, { records: ['r3'], continues: true }, { records: ['r4'] }];

    expect(chunkDocument({ sections }, opts)).toEqual(['r1\nr2\nr3', 'r4']);
  });

  it('emits a heading with no body as a chunk of its own', () => {
    expect(chunkDocument({ sections: [{ heading: 'Lonely', text: '' }] }, opts)).toEqual(['Lonely']);
  });

  it('shortens a heading longer than a third of a chunk at a word', () => {
    const [chunk] = chunkDocument({ sections: [{ heading: words(40), text: 'body' }] }, opts);

    const heading = chunk?.split('\n')[0] ?? '';
    expect(heading.length).toBeLessThanOrEqual(33);
    expect(heading.endsWith('…')).toBe(true);
    expect(chunk?.endsWith('\nbody')).toBe(true);
  });

  it('is deterministic', () => {
    const doc = { sections: [{ heading: 'H', text: `${words(300)}.\n\n${words(50, 'z')}` }] };

    expect(chunkDocument(doc)).toEqual(chunkDocument(doc));
  });

  it.each([
    ['cut line by line', { maxChars: 100, overlapChars: 30 }],
    ['that fits one chunk', { maxChars: 100_000, overlapChars: 30 }],
    ['that outgrows one chunk later', { maxChars: 250, overlapChars: 60 }],
  ])('joins a paragraph the parser cut between lines (openParagraph), %s, exactly as if whole', (_label, options) => {
    const para = (n: number, stem: string): string[] => Array.from({ length: n }, (_, i) => `${stem} line ${i} ${words(i % 5, 'x')}`);
    const [a, b, c, d] = [para(3, 'a'), para(2, 'b'), para(4, 'c'), para(2, 'd')];
    const whole: Section[] = [{ heading: 'H', text: [`${a.join('\n')}\n  ${b.join('\n')}\n${c.join('\n')}`, d.join('\n')].join('\n\n') }];
    const cut: Section[] = [
      { heading: 'H', text: a.join('\n'), openParagraph: true },
      { heading: 'H', text: `  ${b.join('\n')}`, continues: true, openParagraph: true },
      { heading: 'H', text: `${c.join('\n')}\n\n${d.join('\n')}`, continues: true },
    ];

    expect(chunkDocument({ sections: cut }, options)).toEqual(chunkDocument({ sections: whole }, options));
  });

  it('closes a cut paragraph when the next section does not continue it', () => {
    const cut: Section[] = [
      { text: 'alpha\nbeta', openParagraph: true },
      { heading: 'Next', text: 'gamma' },
    ];

    expect(chunkDocument({ sections: cut }, opts)).toEqual(['alpha\nbeta', 'Next\ngamma']);
  });

  it('gives the same chunks streamed as in memory', async () => {
    const sections: Section[] = [{ heading: 'A', text: words(400) }, { records: ['x: 1', 'y: 2'] }];
    const streamed: string[] = [];

    for await (const c of chunkSections(sections, opts)) streamed.push(c);

    expect(streamed).toEqual(chunkDocument({ sections }, opts));
  });
});
