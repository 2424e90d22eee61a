import fs, { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { convertPdf } from './pdf.js';
import { CONVERT_TYPES, DEFAULT_CONVERT_LIMITS, type ConvertResult, type ConvertType } from './types.js';

const FIXTURES = new URL('../../test/fixtures/convert/', import.meta.url);
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, FIXTURES)));
const convert = (bytes: Uint8Array, limits = DEFAULT_CONVERT_LIMITS): Promise<ConvertResult> =>
  convertPdf(bytes, { name: 'doc.pdf', limits });

/** The Markdown of a fixture that must convert. */
async function markdownOf(name: string): Promise<{ markdown: string; units: number }> {
  const r = await convert(fixture(name));
  if (!r.ok) throw new Error(`${name}: ${r.skip}: ${r.reason}`);
  return r;
}

/** The rules every converter's output keeps (docs/convert.md). */
function expectWellFormed(markdown: string): void {
  expect(markdown.endsWith('\n')).toBe(true);
  expect(markdown.endsWith('\n\n')).toBe(false);
  expect(markdown).not.toMatch(/[ \t]+$/m);
  expect(markdown).not.toContain('\n\n\n');
  expect(markdown).not.toContain('\u00ad');
}

const CONVERTIBLE = [
  'report-libreoffice.pdf',
  'handbook-chromium.pdf',
  'notes-pdftex.pdf',
  'standard-fonts.pdf',
  'external-refs.pdf',
  'owner-locked.pdf',
];

describe('convertPdf on real PDFs', () => {
  afterEach(() => vi.restoreAllMocks());

  it('converts a type that `convert:` accepts', () => {
    const type: ConvertType = 'pdf';
    expect(CONVERT_TYPES).toContain(type);
  });

  it('LibreOffice: title and headings by size, page markers, paragraphs rejoined, lists, a table, no header or footer', async () => {
    const { markdown, units } = await markdownOf('report-libreoffice.pdf');
    expectWellFormed(markdown);
    expect(units).toBe(3);
    const pages = ['<!-- page 1 -->', '<!-- page 2 -->', '<!-- page 3 -->'].map((m) => markdown.indexOf(m));
    expect(pages[0]).toBe(0);
    expect(pages[0]).toBeLessThan(pages[1] as number);
    expect(pages[1]).toBeLessThan(pages[2] as number);
    expect(markdown).toMatch(/^# Harbour Survey Report$/m);
    expect(markdown).toMatch(/^## Introduction$/m);
    expect(markdown).toMatch(/^### Method$/m);
    expect(markdown).toMatch(/^## Findings$/m);
    expect(markdown).toMatch(/^### Recommendations$/m);
    expect(markdown).toMatch(/^## Appendix$/m);
    expect(markdown.indexOf('## Findings')).toBeGreaterThan(pages[1] as number);
    expect(markdown).toContain(
      '\nThe harbour survey measured the depth of the western channel at forty stations during the spring tides of April. Each station was sounded three times,',
    );
    expect(markdown).toContain('drawn from a lead-line survey rather than an echo sounder.\n');
    expect(markdown).toContain('\n- A single-beam echo sounder mounted on the pilot launch\n- Differential GPS');
    expect(markdown).toContain(
      "\n- A tide gauge read every ten minutes by the harbour master's office, whose readings were logged by hand and later typed into the survey spreadsheet\n",
    );
    expect(markdown).toContain(
      '\n1. The outer bar, at low water\n2. The western channel, on the flood\n3. The inner basin, at high water\n',
    );
    expect(markdown).toContain(
      '\n| Station | Depth 2014 (m) | Depth 2024 (m) |\n| --- | --- | --- |\n| Outer bar | 6.2 | 5.1 |\n| Customs pier | 4.8 | 3.0 |\n',
    );
    expect(markdown).toContain('| Inner basin | 5.5 | 4.9 |\n');
    expect(markdown).not.toContain('internal draft');
    expect(markdown).not.toMatch(/^Page \d/m);
  });

  it('Chromium: headings, soft hyphens rejoined, a table, a numbered list, its print header and footer dropped', async () => {
    const { markdown, units } = await markdownOf('handbook-chromium.pdf');
    expectWellFormed(markdown);
    expect(units).toBe(2);
    expect(markdown).toMatch(/^# Orchard Cooperative Handbook$/m);
    expect(markdown).toMatch(/^## Booking the pressing shed$/m);
    expect(markdown).toMatch(/^### Fees for the season$/m);
    expect(markdown).toMatch(/^## Looking after the cold store$/m);
    expect(markdown).toContain('the maintenance of shared machinery, the incorporation of new members, the arbitration of disputes');
    expect(markdown).toContain('the redistribution of surplus fruit, all of which are described below.');
    expect(markdown).toContain('| Item | Unit | Fee |\n| --- | --- | --- |\n| Pressing shed | per day | £40 |');
    expect(markdown).toContain('| Cold store | per crate per week | £1.50 |');
    expect(markdown).toContain('\n1. Close the inner door before opening the outer one\n2. Stack crates');
    expect(markdown).toContain('the log book hanging by the door; a reading above four degrees is reported to the duty steward at once');
    // The print header (date, title) and footer (file URL, "1/2") repeat on both pages.
    expect(markdown).not.toContain('file://');
    expect(markdown).not.toMatch(/\d\/2$/m);
    expect(markdown).not.toMatch(/AM|PM/);
    expect(markdown.match(/Orchard Cooperative Handbook/g)).toHaveLength(1);
  });

  it('pdfTeX: the title, section levels, hyphenated words rejoined, lists, a table, page numbers dropped', async () => {
    const { markdown, units } = await markdownOf('notes-pdftex.pdf');
    expectWellFormed(markdown);
    expect(units).toBe(2);
    expect(markdown).toMatch(/^# Notes on Dry-Stone Walling$/m);
    // The author's line under the title is as large as a subsection heading, but the outline does not name it.
    expect(markdown).toContain('\n\nField Conservation Group\n\n');
    expect(markdown).toMatch(/^## Why the walls fall$/m);
    expect(markdown).toMatch(/^### Tools for a repair$/m);
    expect(markdown).toMatch(/^### Order of work$/m);
    expect(markdown).toMatch(/^## Stone needed per metre$/m);
    expect(markdown).toMatch(/^## Recording the work$/m);
    expect(markdown).toContain('seldom matches the weathered faces of the surviving wall');
    expect(markdown).toContain(
      'each course is held by the weight of the courses above and by the friction between carefully chosen stones.',
    );
    expect(markdown).toContain('\n- A walling hammer for dressing stones\n');
    expect(markdown).toContain(
      '\n- Sturdy gloves, because gritstone is abrasive and limestone edges are sharp enough to cut through ordinary gardening gloves\n',
    );
    expect(markdown).toContain('\n1. Strip the fallen section back to sound foundations\n');
    expect(markdown).toContain('| Wall height | Stone (tonnes) | Days for two wallers |\n| --- | --- | --- |\n| 1.0 m | 0.8 | 1.5 |');
    expect(markdown).toContain('| 1.4 m | 1.4 | 2.5 |');
    expect(markdown).not.toMatch(/^\d+$/m);
  });

  it('a PDF with fonts it does not embed converts, its running heading kept and its page numbers dropped', async () => {
    const { markdown, units } = await markdownOf('standard-fonts.pdf');
    expectWellFormed(markdown);
    expect(units).toBe(3);
    expect(markdown).toMatch(/^<!-- page 3 -->\n\n# Section 3: the \w+ \w+\n\n\w/m);
    expect(markdown).not.toMatch(/^\d+$/m);
  });

  it('a PDF naming a font, an image file, a link and a document outside it converts, fetching and reading none of them', async () => {
    const bytes = fixture('external-refs.pdf');
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const reads = [vi.spyOn(fs, 'readFileSync'), vi.spyOn(fs, 'readFile'), vi.spyOn(fs, 'openSync'), vi.spyOn(fs.promises, 'readFile')];
    const r = await convert(bytes);
    expect(fetchSpy).not.toHaveBeenCalled();
    for (const spy of reads) expect(spy).not.toHaveBeenCalled();
    expect(r).toMatchObject({ ok: true, units: 1 });
    if (r.ok) {
      expect(r.markdown).toMatch(/^# External references$/m);
      expect(r.markdown).toContain(
        'an image kept in another file, a web address and a document on disk: a converter fetches none of them.',
      );
    }
  });

  it('an owner password that only restricts printing or copying does not stop the conversion', async () => {
    const { markdown } = await markdownOf('owner-locked.pdf');
    expect(markdown).toMatch(/^# Harbour Survey Report$/m);
  });

  it('the same bytes give byte-identical Markdown, and the bytes given are left as they were', async () => {
    for (const name of CONVERTIBLE) {
      const bytes = fixture(name);
      const copy = bytes.slice();
      const first = await convert(bytes);
      const second = await convert(bytes);
      expect(second, name).toEqual(first);
      expect(Buffer.from(bytes).equals(Buffer.from(copy)), name).toBe(true);
    }
  });
});

describe('convertPdf on what it cannot convert', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a password-protected PDF is encrypted', async () => {
    const r = await convert(fixture('encrypted.pdf'));
    expect(r).toMatchObject({ ok: false, skip: 'encrypted' });
    if (!r.ok) expect(r.reason).toMatch(/password/);
  });

  it('a scanned PDF (images, no text layer) is no-text, saying that OCR is not done', async () => {
    const r = await convert(fixture('scanned.pdf'));
    expect(r).toMatchObject({ ok: false, skip: 'no-text' });
    if (!r.ok) expect(r.reason).toMatch(/no text layer on any of its 2 pages.*OCR/);
  });

  it('a truncated PDF is convert-failed, saying it is truncated', async () => {
    const r = await convert(fixture('truncated.pdf'));
    expect(r).toMatchObject({ ok: false, skip: 'convert-failed' });
    if (!r.ok) expect(r.reason).toMatch(/truncated/);
  });

  it('a text file named .pdf is convert-failed, saying it is not a PDF', async () => {
    const r = await convert(fixture('mislabelled.pdf'));
    expect(r).toMatchObject({ ok: false, skip: 'convert-failed' });
    if (!r.ok) expect(r.reason).toMatch(/not a PDF/);
    expect(await convert(new Uint8Array(0))).toMatchObject({ ok: false, skip: 'convert-failed', reason: expect.stringMatching(/empty/) });
  });

  it('a PDF whose structure is broken is convert-failed naming it, not a throw', async () => {
    // A header and an end marker around garbage: no objects, no cross-reference table.
    const bytes = new TextEncoder().encode('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R\nendobj\ngarbage\n%%EOF\n');
    const r = await convert(bytes);
    expect(r).toMatchObject({ ok: false, skip: 'convert-failed' });
    if (!r.ok) expect(r.reason).toMatch(/PDF/);
  });

  it('Markdown past maxOutputChars is convert-failed naming the limit', async () => {
    const r = await convert(fixture('report-libreoffice.pdf'), { ...DEFAULT_CONVERT_LIMITS, maxOutputChars: 500 });
    expect(r).toMatchObject({ ok: false, skip: 'convert-failed' });
    if (!r.ok) expect(r.reason).toMatch(/500 characters.*maxOutputChars/);
  });
});

/**
 * A PDF written here from content-stream operators, one string a page. F1 is Courier (every
 * character 0.6 of the size wide, so that lines of equal length end at one edge), F2 Courier-Bold;
 * neither is embedded.
 */
function pdfOf(pages: readonly { ops: string; rotate?: number }[], outline: readonly string[] = []): Uint8Array {
  // The outline's objects come after the pages': catalog, pages, 2 fonts, 2 objects a page, the outline root.
  const outlineRoot = 5 + 2 * pages.length;
  const objects: string[] = [
    `<< /Type /Catalog /Pages 2 0 R${outline.length === 0 ? '' : ` /Outlines ${outlineRoot} 0 R`} >>`,
    `<< /Type /Pages /Count ${pages.length} /Kids [${pages.map((_, i) => `${5 + 2 * i} 0 R`).join(' ')}] >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Courier-Bold >>',
  ];
  pages.forEach((p, i) => {
    const rotate = p.rotate === undefined ? '' : ` /Rotate ${p.rotate}`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842]${rotate} /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents ${6 + 2 * i} 0 R >>`,
      `<< /Length ${Buffer.byteLength(p.ops, 'latin1')} >>\nstream\n${p.ops}\nendstream`,
    );
  });
  if (outline.length > 0) {
    const item = (i: number): number => outlineRoot + 1 + i;
    objects.push(`<< /Type /Outlines /First ${item(0)} 0 R /Last ${item(outline.length - 1)} 0 R /Count ${outline.length} >>`);
    outline.forEach((title, i) => {
      const links = `${i > 0 ? ` /Prev ${item(i - 1)} 0 R` : ''}${i < outline.length - 1 ? ` /Next ${item(i + 1)} 0 R` : ''}`;
      objects.push(`<< /Title (${title}) /Parent ${outlineRoot} 0 R${links} /Dest [5 0 R /Fit] >>`);
    });
  }
  let out = '%PDF-1.7\n';
  const offsets = objects.map((body, i) => {
    const at = out.length;
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}

/** One line of text at (x, y): `BT ... ET` in font F1 (or `font`), `size` points. */
const text = (x: number, y: number, s: string, size = 10, font = 'F1'): string =>
  `BT /${font} ${size} Tf ${x} ${y} Td (${s.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj ET\n`;

/** Lines from `y` down at 12 points each. */
const column = (x: number, y: number, lines: readonly string[]): string => lines.map((l, i) => text(x, y - 12 * i, l)).join('');

async function markdownOfPdf(pages: readonly { ops: string; rotate?: number }[], outline: readonly string[] = []): Promise<string> {
  const r = await convert(pdfOf(pages, outline));
  if (!r.ok) throw new Error(`${r.skip}: ${r.reason}`);
  expectWellFormed(r.markdown);
  return r.markdown;
}

describe('convertPdf on layouts written for the test', () => {
  it('escapes text that Markdown would read as structure, in paragraphs and table cells', async () => {
    const ops =
      text(72, 760, 'Agenda', 18, 'F2') +
      text(72, 730, '#3 on the list is the budget.') +
      text(72, 700, '> not a quotation, a greater-than sign.') +
      text(72, 670, '2024. The year the pier was rebuilt.') +
      text(72, 630, 'Gate') +
      text(200, 630, 'Signal') +
      text(72, 612, 'North') +
      text(200, 612, 'in|out') +
      text(72, 594, 'South') +
      text(200, 594, 'closed');
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).toContain('\n# Agenda\n');
    expect(markdown).toContain('\n\\#3 on the list is the budget.\n');
    expect(markdown).toContain('\n\\> not a quotation, a greater-than sign.\n');
    expect(markdown).toContain('\n2024\\. The year the pier was rebuilt.\n');
    expect(markdown).toContain('| Gate | Signal |\n| --- | --- |\n| North | in\\|out |\n| South | closed |\n');
  });

  it('reads a two-column page column by column, each paragraph rejoined', async () => {
    const left = [
      'The left column starts',
      'here and runs on down',
      'the page for six lines',
      'of text that a reader',
      'takes before the right',
      'column of the page.',
    ];
    const right = [
      'The right column comes',
      'second and is read in',
      'its turn after the',
      'left one has ended at',
      'its foot, as a person',
      'reads a newspaper.',
    ];
    const markdown = await markdownOfPdf([{ ops: column(72, 700, left) + column(320, 700, right) }]);
    expect(markdown).toContain(`\n${left.join(' ')}\n\n${right.join(' ')}\n`);
  });

  it('runs a paragraph on from the foot of one column to the top of the next', async () => {
    // Columns of 40 characters (240 points) a line, as wide as a two-column paper's.
    const left = [
      'A sentence that starts in the left column',
      'and runs on for a while, so that it is',
      'still going when the column comes to its',
    ];
    const right = ['foot and reaches the top of the right one', 'before it ends.'];
    const ops = column(50, 700, left) + column(320, 700, right) + text(320, 664, 'The next paragraph begins here.');
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).toContain(`\n${[...left, ...right].join(' ')}\n\nThe next paragraph begins here.\n`);
  });

  it('rejoins an indented paragraph set inside a wider column, and one under a wider centred line', async () => {
    const quote = [
      'An indented passage, such as an abstract',
      'or a quotation, is narrower than the text',
      'around it and ends each of its lines here.',
    ];
    const body = [
      'The body text of the column runs on wider,',
      'to the full measure of the column, and its',
      'lines end further to the right than those.',
    ];
    const ops = text(150, 780, 'someone@example.org, someone.else@example.org') + column(94, 740, quote) + column(72, 690, body);
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).toContain(`\n${quote.join(' ')}\n\n${body.join(' ')}\n`);
  });

  it('reads columns of running text set line by line across the page column by column, not as a table', async () => {
    // Some writers (IRS instructions) set a three-column page one baseline at a time, across all three.
    const cols = [
      [
        'The first column opens here',
        'and its text runs down the',
        'page for six lines before',
        'it carries on at the top of',
        'the second column, as the',
        'reader expects it to do.',
      ],
      [
        'The second column has its',
        'own paragraph that begins',
        'at its top and goes on to',
        'its foot in six lines, and',
        'then the third one takes',
        'over from the second.',
      ],
      [
        'The third column closes the',
        'page with a paragraph that',
        'a reader takes last of all',
        'after both of the others',
        'have been read in their',
        'turn, top to bottom.',
      ],
    ];
    const ops = [0, 1, 2, 3, 4, 5].map((i) => cols.map((c, k) => text(40 + 185 * k, 700 - 12 * i, c[i] as string)).join('')).join('');
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).not.toContain('|');
    expect(markdown).toContain(`\n${cols.map((c) => c.join(' ')).join('\n\n')}\n`);
  });

  it('ends a table at a row whose segments all fall in one column (a formula), and keeps no table of two rows', async () => {
    const ops =
      text(72, 700, 'Gauge reading at the quay') +
      text(300, 700, '4.2') +
      text(72, 686, 'Gauge reading at the pier') +
      text(300, 686, '3.9') +
      text(72, 672, 'x') +
      text(150, 672, '= y + z') +
      text(72, 658, 'Sum') +
      text(300, 658, '8.1');
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).not.toContain('|');
    expect(markdown).toContain('Gauge reading at the quay 4.2');
  });

  it('reads a page turned a quarter, its text set along the turned page', async () => {
    // /Rotate 90 shows the page turned clockwise; text drawn going up the sheet reads left to right.
    const rotated = (x: number, y: number, s: string): string => `BT /F1 10 Tf 0 1 -1 0 ${x} ${y} Tm (${s}) Tj ET\n`;
    const ops = rotated(100, 72, 'First line of the turned page, read') + rotated(112, 72, 'before the second line under it.');
    const markdown = await markdownOfPdf([{ ops, rotate: 90 }]);
    expect(markdown).toContain('\nFirst line of the turned page, read before the second line under it.\n');
  });

  it('drops a header and footer on most pages, keeps a line at the top of one page only', async () => {
    const page = (n: number): { ops: string } => ({
      ops:
        text(72, 810, 'Annual report of the harbour board') +
        (n === 1 ? text(72, 790, 'Draft for the board meeting') : '') +
        text(72, 700, `Body text of page ${n}.`) +
        text(260, 30, `Page ${n} of 4`),
    });
    const markdown = await markdownOfPdf([1, 2, 3, 4].map(page));
    expect(markdown).not.toContain('Annual report');
    expect(markdown).not.toContain('of 4');
    expect(markdown).toContain('Draft for the board meeting');
    expect(markdown).toContain('<!-- page 1 -->\n\nDraft for the board meeting\n\nBody text of page 1.\n');
    for (const n of [2, 3, 4]) expect(markdown).toContain(`<!-- page ${n} -->\n\nBody text of page ${n}.`);
  });

  it('keeps a heading that opens every page at the same height, its number changing', async () => {
    const page = (n: number): { ops: string } => ({
      ops: text(72, 800, `Section ${n}`, 18, 'F2') + text(72, 700, `The text of section ${n}.`) + text(290, 30, String(n)),
    });
    const markdown = await markdownOfPdf([1, 2, 3].map(page));
    for (const n of [1, 2, 3]) expect(markdown).toContain(`<!-- page ${n} -->\n\n# Section ${n}\n\nThe text of section ${n}.\n`);
  });

  it('takes a standalone line at body size for a heading when the outline names it', async () => {
    const ops =
      text(72, 760, 'Survey notes', 18, 'F2') +
      text(72, 730, '1 Scope') +
      text(72, 712, 'The survey covers the western channel only.') +
      text(72, 688, '2 Method') +
      text(72, 670, 'Soundings were taken at every station.');
    const plain = await markdownOfPdf([{ ops }]);
    expect(plain).toContain('\n\n1 Scope\n\n');
    const outlined = await markdownOfPdf([{ ops }], ['1 Scope', '2 Method']);
    expect(outlined).toContain('\n# Survey notes\n\n## 1 Scope\n\nThe survey covers the western channel only.\n\n## 2 Method\n\n');
  });

  it('keeps a hyphen before a capital and drops one before a lowercase continuation', async () => {
    const ops = column(72, 700, ['The essay by Jean-', 'Paul Sartre was trans-', 'lated in the spring.']);
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).toContain('\nThe essay by Jean-Paul Sartre was translated in the spring.\n');
  });

  it('reads a lone symbol set apart before each line as a bullet, not as a table column', async () => {
    // Word's Wingdings bullet often has no Unicode mapping: pdf.js reads it as "!".
    const ops =
      text(72, 700, '!') +
      text(90, 700, 'Title I implements the treaties.') +
      text(72, 686, '!') +
      text(90, 686, 'Title II limits the liability of') +
      text(90, 674, 'online service providers.') +
      text(72, 660, '!') +
      text(90, 660, 'Title III creates an exemption.');
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).toContain(
      '\n- Title I implements the treaties.\n- Title II limits the liability of online service providers.\n- Title III creates an exemption.\n',
    );
  });

  it("joins an item's wrapped lines that start under its marker", async () => {
    const ops = column(72, 700, [
      'a. You have no income from a trade or',
      'business in the United States,',
      'b. You have no U.S. source income.',
    ]);
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).toContain(
      '\n- a. You have no income from a trade or business in the United States,\n- b. You have no U.S. source income.\n',
    );
    // IRS instructions indent an item's first line only: its wrapped lines go back to the column's edge.
    const irs =
      text(84, 700, 'a. You have no income from a trade') +
      text(72, 688, 'or business in the United States,') +
      text(84, 676, 'b. No U.S. source income.');
    expect(await markdownOfPdf([{ ops: irs }])).toContain(
      '\n- a. You have no income from a trade or business in the United States,\n- b. No U.S. source income.\n',
    );
  });

  it('nests list items by the indent of their markers', async () => {
    const ops =
      text(72, 700, '\xb7 Tools for the survey') +
      text(90, 688, '\xb7 An echo sounder') +
      text(90, 676, '\xb7 A tide gauge') +
      text(72, 664, '\xb7 People on the launch');
    const markdown = await markdownOfPdf([{ ops }]);
    expect(markdown).toContain('\n- Tools for the survey\n  - An echo sounder\n  - A tide gauge\n- People on the launch\n');
  });
});
