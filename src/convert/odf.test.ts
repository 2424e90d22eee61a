import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { convertOdp, convertOds, convertOdt } from './odf.js';
import { DEFAULT_CONVERT_LIMITS, type Converter, type ConvertLimits, type ConvertResult } from './types.js';
import { bombPart, deflated, fixture, rezip, type ZipEntry } from './zip.test-util.js';

type Failure = Extract<ConvertResult, { ok: false }>;
const run = (convert: Converter, bytes: Uint8Array, limits: Partial<ConvertLimits> = {}): Promise<ConvertResult> =>
  convert(bytes, { name: 'x', limits: { ...DEFAULT_CONVERT_LIMITS, ...limits } });

async function markdown(convert: Converter, bytes: Uint8Array): Promise<string> {
  const r = await run(convert, bytes);
  if (!r.ok) throw new Error(r.reason);
  return r.markdown;
}

async function failure(convert: Converter, bytes: Uint8Array, limits: Partial<ConvertLimits> = {}): Promise<Failure> {
  const r = await run(convert, bytes, limits);
  expect(r.ok).toBe(false);
  return r as Failure;
}

const inflate = (e: ZipEntry): string => (e.method === 8 ? inflateRawSync(e.stored) : e.stored).toString('utf8');
const withContent = (name: string, change: (xml: string) => string): Uint8Array =>
  rezip(name, (entries) => entries.map((e) => (e.name === 'content.xml' ? deflated(e.name, change(inflate(e))) : e)));

describe('convertOdt', () => {
  it('keeps the title, headings by outline level, nested and numbered lists, the table and the footnote', async () => {
    const r = await run(convertOdt, fixture('report.odt'));
    expect(r).toMatchObject({ ok: true, units: 1 });
    const md = (r as { markdown: string }).markdown;
    expect(md.split('\n').filter((l) => l.startsWith('#'))).toEqual([
      '# Harbour Survey Report',
      '# Introduction',
      '## Method',
      '## Results',
      '# Conclusions',
    ]);
    expect(md).toContain(
      '- Salinity at the surface\n  - Sampled with a refractometer\n  - Cross-checked in the laboratory\n- Water temperature\n- Visibility in metres\n',
    );
    expect(md).toContain('1. Calibrate the flow meter\n2. Lower the probe to four metres\n3. Log the reading\n');
    expect(md).toContain('| Station | Flow (m/s) | Notes |\n| --- | --- | --- |\n| North pier | 1.2 | Strong eddies |\n');
    expect(md).toContain('compared against the 1998 baseline.[^1]\n');
    expect(md.trimEnd().endsWith('[^1]: The baseline was published by the port authority in March 1998.')).toBe(true);
    expect(md).toContain('Grüße from Zürich; Ελληνικά; 日本語のテキスト.');
    expect(md).toContain('\n\\#5 is not a heading');
  });

  it('keeps a heading that sits in a list (numbered headings) as a heading', async () => {
    const bytes = withContent('report.odt', (xml) =>
      xml.replace(
        /<text:h text:style-name="Heading_20_1" text:outline-level="1">Conclusions<\/text:h>/,
        '<text:list text:style-name="WWNum1003"><text:list-item><text:h text:outline-level="1">Conclusions</text:h></text:list-item></text:list>',
      ),
    );
    expect(await markdown(convertOdt, bytes)).toContain('\n# Conclusions\n\nCafé owners');
  });

  it('rejoins a paragraph and counts text:s spaces', async () => {
    const bytes = withContent('report.odt', (xml) =>
      xml.replace('Divers recorded', 'Divers<text:line-break/>recorded<text:s text:c="2"/>x'),
    );
    expect(await markdown(convertOdt, bytes)).toContain('Divers recorded x readings');
  });
});

describe('convertOds', () => {
  it('writes each sheet as a heading and a pipe table, repeated rows and columns written out', async () => {
    const r = await run(convertOds, fixture('budget.ods'));
    expect(r).toMatchObject({ ok: true, units: 2 });
    const md = (r as { markdown: string }).markdown;
    expect(md).toContain(
      '## Sheet: Berths\n\n| Berth | Ships | Hours | Status |\n| --- | --- | --- | --- |\n| A1 | 42 | 310 | Open \\| busy |\n',
    );
    expect(md).toContain('| Total | 59 | 432 | |\n');
    expect(md).toContain('## Sheet: Crew rota\n');
    expect(md.match(/\| Standby \| Müller \| Müller \| Müller \|/g)).toHaveLength(3);
    expect(md).toContain('| Holiday | | | Ελένη |\n');
  });

  it('does not write out empty repeats, and stops a repeat that would pass the output limit', async () => {
    const empty = withContent('budget.ods', (xml) =>
      xml.replace(
        '</table:table>',
        '<table:table-row table:number-rows-repeated="1048000"><table:table-cell table:number-columns-repeated="16384"/></table:table-row></table:table>',
      ),
    );
    const md = await markdown(convertOds, empty);
    expect(md.split('\n').length).toBeLessThan(30);
    const huge = withContent('budget.ods', (xml) =>
      xml.replace(
        '</table:table>',
        '<table:table-row table:number-rows-repeated="1048000"><table:table-cell table:number-columns-repeated="16384" office:value-type="string"><text:p>x</text:p></table:table-cell></table:table-row></table:table>',
      ),
    );
    const r = await failure(convertOds, huge);
    expect(r.reason).toMatch(/repeat cells past the output limit of 67108864 characters/);
  });
});

describe('convertOdp', () => {
  it('writes slides in order with titles, outline levels, the table and the notes', async () => {
    const r = await run(convertOdp, fixture('deck.odp'));
    expect(r).toMatchObject({ ok: true, units: 4 });
    const md = (r as { markdown: string }).markdown;
    expect(md.split('\n').filter((l) => l.startsWith('## '))).toEqual([
      '## Slide 1: Quarterly Harbour Review',
      '## Slide 2: Traffic this quarter',
      '## Slide 3: Berth usage',
      '## Slide 4: Next steps',
    ]);
    expect(md).toContain(
      '- Container ships up twelve percent\n  - Mostly on the northern route\n  - Two new carriers\n- Ferry crossings unchanged\n',
    );
    expect(md).toContain('| Berth | Ships | Hours |\n| --- | --- | --- |\n| A1 | 42 | 310 |\n');
    expect(md).toContain('> Notes: Remind the board that the northern route opened in July.\n');
    expect(md).toContain('1. Extend the breakwater survey\n2. Tender for new cranes\n');
  });
});

describe.each([
  ['ODT', convertOdt, 'report.odt'],
  ['ODS', convertOds, 'budget.ods'],
  ['ODP', convertOdp, 'deck.odp'],
] as const)('%s: the same bytes, the same Markdown; hostile files', (format, convert, name) => {
  it('is deterministic and ends with one newline', async () => {
    const [a, b] = [await markdown(convert, fixture(name)), await markdown(convert, fixture(name))];
    expect(a).toBe(b);
    expect(a.endsWith('\n') && !a.endsWith('\n\n')).toBe(true);
    expect(a).not.toMatch(/[ \t]$/m);
    expect(a).not.toMatch(/\n\n\n/);
  });

  it('reports a password-protected file as encrypted', async () => {
    const r = await failure(convert, fixture(`encrypted.${format.toLowerCase()}`));
    expect(r.skip).toBe('encrypted');
    expect(r.reason).toMatch(new RegExp(`the ${format} file is password-protected`));
  });

  it('is not fooled by a part whose name says encryption-data', async () => {
    const bytes = rezip(name, (entries) =>
      entries.map((e) =>
        e.name === 'META-INF/manifest.xml'
          ? deflated(
              e.name,
              inflate(e).replace(
                '</manifest:manifest>',
                '<manifest:file-entry manifest:full-path="encryption-data.txt" manifest:media-type="text/plain"/></manifest:manifest>',
              ),
            )
          : e,
      ),
    );
    expect((await run(convert, bytes)).ok).toBe(true);
  });

  it('fails a truncated file naming the central directory', async () => {
    const bytes = fixture(name);
    const r = await failure(convert, bytes.slice(0, bytes.length - 200));
    expect(r.reason).toMatch(new RegExp(`central directory is missing: the file is truncated or not an ${format}`));
  });

  it('fails another kind of file given this extension', async () => {
    const other = name === 'report.odt' ? 'deck.odp' : 'report.odt';
    expect((await failure(convert, fixture(other))).reason).toMatch(
      new RegExp(`^the file is an (ODT|ODP) \\(its mimetype says .*\\), not an ${format}$`),
    );
    expect((await failure(convert, fixture('deck-pandoc.pptx'))).reason).toMatch(/Office Open XML package/);
    expect((await failure(convert, fixture('report.doc'))).reason).toMatch(/OLE2/);
  });

  it('fails a content.xml that is not well-formed, naming the part', async () => {
    const bytes = withContent(name, (xml) => xml.slice(0, Math.floor(xml.length * 0.8)));
    expect((await failure(convert, bytes)).reason).toMatch(new RegExp(`^the ${format} part content.xml is not well-formed XML`));
  });

  it('fails a zip bomb naming the limit', async () => {
    const bytes = rezip(name, (entries) => [...entries, bombPart('zeros.xml', 3 * 1024 * 1024)]);
    expect((await failure(convert, bytes, { maxExpandedBytes: 2 * 1024 * 1024 })).reason).toMatch(/past the limit of 2 MiB: a zip bomb/);
  });
});
