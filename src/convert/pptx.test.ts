import { describe, expect, it } from 'vitest';
import { convertPptx } from './pptx.js';
import { DEFAULT_CONVERT_LIMITS, type ConvertLimits, type ConvertResult } from './types.js';
import { bombPart, deflated, fixture, rezip, stored, zipOf } from './zip.test-util.js';

const convert = (bytes: Uint8Array, limits: Partial<ConvertLimits> = {}): Promise<ConvertResult> =>
  convertPptx(bytes, { name: 'deck.pptx', limits: { ...DEFAULT_CONVERT_LIMITS, ...limits } });

async function markdown(bytes: Uint8Array): Promise<string> {
  const r = await convert(bytes);
  if (!r.ok) throw new Error(r.reason);
  return r.markdown;
}

const failure = async (bytes: Uint8Array, limits: Partial<ConvertLimits> = {}) => {
  const r = await convert(bytes, limits);
  expect(r.ok).toBe(false);
  return r as Extract<ConvertResult, { ok: false }>;
};

describe.each(['deck-libreoffice.pptx', 'deck-pandoc.pptx'])('convertPptx on %s', (name) => {
  it('writes each slide in order with its title, bullet levels, table and notes', async () => {
    const r = await convert(fixture(name));
    expect(r).toMatchObject({ ok: true, units: 4 });
    const md = (r as { markdown: string }).markdown;
    expect(md).toContain('# Quarterly Harbour Review\n');
    const headings = md.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual([
      '## Slide 1: Quarterly Harbour Review',
      '## Slide 2: Traffic this quarter',
      '## Slide 3: Berth usage',
      '## Slide 4: Next steps',
    ]);
    expect(md).toContain(
      '- Container ships up twelve percent\n  - Mostly on the northern route\n  - Two new carriers\n- Ferry crossings unchanged\n',
    );
    expect(md).toContain('| Berth | Ships | Hours |\n| --- | --- | --- |\n| A1 | 42 | 310 |\n| B2 | 17 | 122 |\n');
    expect(md).toContain('> Notes: Remind the board that the northern route opened in July.\n');
    expect(md).toContain('> Notes: Berth B2 was closed for dredging for two weeks.\n');
    expect(md).toContain('1. Extend the breakwater survey\n2. Tender for new cranes\n');
    expect(md).toContain('Ελληνικά and café déjà vu');
    // Notes come after their slide's content, before the next slide.
    expect(md.indexOf('> Notes: Remind')).toBeGreaterThan(md.indexOf('Ferry crossings'));
    expect(md.indexOf('> Notes: Remind')).toBeLessThan(md.indexOf('## Slide 3'));
  });

  it('gives byte-identical Markdown for the same bytes, ending with one newline and no trailing spaces', async () => {
    const [a, b] = [await markdown(fixture(name)), await markdown(fixture(name))];
    expect(a).toBe(b);
    expect(a.endsWith('\n') && !a.endsWith('\n\n')).toBe(true);
    expect(a).not.toMatch(/[ \t]$/m);
    expect(a).not.toMatch(/\n\n\n/);
  });
});

describe('convertPptx: order and structure', () => {
  it('follows the presentation list, not the part names', async () => {
    const bytes = rezip('deck-pandoc.pptx', (entries) =>
      entries.map((e) => {
        if (e.name !== 'ppt/presentation.xml') return e;
        const xml = e.stored.length > 0 ? inflate(e) : '';
        const ids = [...xml.matchAll(/<p:sldId [^>]*\/>/g)].map((m) => m[0]);
        return deflated(e.name, xml.replace(ids.join(''), [...ids].reverse().join('')));
      }),
    );
    const headings = (await markdown(bytes)).split('\n').filter((l) => l.startsWith('## '));
    expect(headings[0]).toBe('## Slide 1: Next steps');
    expect(headings[3]).toBe('## Slide 4: Quarterly Harbour Review');
  });

  it("writes a chart's title and its cached series by category as a table", async () => {
    const pt = (i: number, v: string): string => `<c:pt idx="${i}"><c:v>${v}</c:v></c:pt>`;
    const series = (name: string, values: string[]): string =>
      `<c:ser><c:tx><c:strRef><c:f>Sheet1!$B$1</c:f><c:strCache>${pt(0, name)}</c:strCache></c:strRef></c:tx>` +
      `<c:cat><c:strRef><c:f>Sheet1!$A$2:$A$3</c:f><c:strCache>${pt(0, 'March')}${pt(1, 'April')}</c:strCache></c:strRef></c:cat>` +
      `<c:val><c:numRef><c:f>Sheet1!$B$2:$B$3</c:f><c:numCache>${values.map((v, i) => pt(i, v)).join('')}</c:numCache></c:numRef></c:val></c:ser>`;
    const chart =
      '<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><c:chart>' +
      '<c:title><c:tx><c:rich><a:p><a:r><a:t>Tonnes landed</a:t></a:r></a:p></c:rich></c:tx></c:title><c:plotArea><c:barChart>' +
      series('Grain', ['120', '135']) +
      series('Coal', ['80', '64']) +
      '</c:barChart></c:plotArea></c:chart></c:chartSpace>';
    const frame =
      '<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="9" name="Chart"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" r:id="rIdChart"/></a:graphicData></a:graphic></p:graphicFrame>';
    const bytes = rezip('deck-pandoc.pptx', (entries) => [
      ...entries.map((e) => {
        if (e.name === 'ppt/slides/slide4.xml') return deflated(e.name, inflate(e).replace('</p:spTree>', `${frame}</p:spTree>`));
        if (e.name === 'ppt/slides/_rels/slide4.xml.rels') {
          const rel =
            '<Relationship Id="rIdChart" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/chart" Target="../charts/chart1.xml"/>';
          return deflated(e.name, inflate(e).replace('</Relationships>', `${rel}</Relationships>`));
        }
        return e;
      }),
      deflated('ppt/charts/chart1.xml', chart),
    ]);
    const md = await markdown(bytes);
    expect(md).toContain('Chart: Tonnes landed\n\n| | Grain | Coal |\n| --- | --- | --- |\n| March | 120 | 80 |\n| April | 135 | 64 |\n');
    expect(md).not.toContain('Sheet1!');
  });

  it("writes a SmartArt diagram's node text as list items", async () => {
    const node = (id: string, text: string, type = ''): string =>
      `<dgm:pt modelId="${id}"${type ? ` type="${type}"` : ''}><dgm:t><a:p><a:r><a:t>${text}</a:t></a:r></a:p></dgm:t></dgm:pt>`;
    const data =
      '<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst>' +
      '<dgm:pt modelId="0" type="doc"/>' +
      node('1', 'Harbour master') +
      node('2', 'ignored connector', 'parTrans') +
      node('3', 'Pilot station') +
      '</dgm:ptLst></dgm:dataModel>';
    const frame =
      '<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="9" name="Diagram"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram"><dgm:relIds xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" r:dm="rIdData"/></a:graphicData></a:graphic></p:graphicFrame>';
    const bytes = rezip('deck-pandoc.pptx', (entries) => [
      ...entries.map((e) => {
        if (e.name === 'ppt/slides/slide4.xml') return deflated(e.name, inflate(e).replace('</p:spTree>', `${frame}</p:spTree>`));
        if (e.name === 'ppt/slides/_rels/slide4.xml.rels') {
          const rel =
            '<Relationship Id="rIdData" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/diagramData" Target="../diagrams/data1.xml"/>';
          return deflated(e.name, inflate(e).replace('</Relationships>', `${rel}</Relationships>`));
        }
        return e;
      }),
      deflated('ppt/diagrams/data1.xml', data),
    ]);
    const md = await markdown(bytes);
    expect(md).toContain('- Harbour master\n- Pilot station\n');
    expect(md).not.toContain('ignored connector');
  });

  it('finds a part a relationship names in another case (OPC part names are case-insensitive)', async () => {
    const bytes = rezip('deck-pandoc.pptx', (entries) =>
      entries.map((e) =>
        e.name === 'ppt/_rels/presentation.xml.rels' ? deflated(e.name, inflate(e).replace('slides/slide2.xml', 'slides/SLIDE2.XML')) : e,
      ),
    );
    expect(await markdown(bytes)).toContain('## Slide 2: Traffic this quarter\n');
  });

  it('does not expand entities a DTD declares', async () => {
    const bytes = rezip('deck-pandoc.pptx', (entries) =>
      entries.map((e) => {
        if (e.name !== 'ppt/slides/slide4.xml') return e;
        const xml = inflate(e).replace('<p:sld ', '<!DOCTYPE p:sld [<!ENTITY boom "BOOMBOOMBOOM">]><p:sld ');
        return deflated(e.name, xml.replace('Next steps', 'Next &boom; steps'));
      }),
    );
    const md = await markdown(bytes);
    expect(md).not.toContain('BOOM');
    expect(md).toContain('## Slide 4: Next &boom; steps');
  });
});

describe('convertPptx: hostile and damaged files', () => {
  it('reports a password-protected PPTX (an OLE2 EncryptedPackage) as encrypted', async () => {
    const r = await failure(fixture('encrypted.pptx'));
    expect(r.skip).toBe('encrypted');
    expect(r.reason).toMatch(/password-protected/);
  });

  it('fails a truncated file naming the missing central directory', async () => {
    const bytes = fixture('deck-pandoc.pptx');
    const r = await failure(bytes.slice(0, Math.floor(bytes.length / 2)));
    expect(r).toMatchObject({ skip: 'convert-failed' });
    expect(r.reason).toMatch(/central directory is missing: the file is truncated or not a PPTX/);
  });

  it('fails files that are not what their extension says', async () => {
    expect((await failure(fixture('report.doc'))).reason).toMatch(/OLE2 \(binary Office\) file, not a PPTX/);
    expect((await failure(fixture('deck.odp'))).reason).toMatch(/no presentation part \(ppt\/presentation\.xml\)/);
    expect((await failure(new TextEncoder().encode('just some text\n'))).reason).toMatch(/not a PPTX/);
    const docx = zipOf([
      deflated('[Content_Types].xml', '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
      deflated(
        '_rels/.rels',
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
      deflated(
        'word/document.xml',
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body/></w:document>',
      ),
    ]);
    expect((await failure(new Uint8Array(docx))).reason).toBe(
      "the package's main part is word/document.xml (<w:document>), not a presentation: the file is not a PPTX",
    );
  });

  it('fails a slide whose XML is not well-formed, naming the slide', async () => {
    const bytes = rezip('deck-pandoc.pptx', (entries) =>
      entries.map((e) => (e.name === 'ppt/slides/slide2.xml' ? deflated(e.name, inflate(e).slice(0, 900)) : e)),
    );
    const r = await failure(bytes);
    expect(r.skip).toBe('convert-failed');
    expect(r.reason).toMatch(/^slide 2's XML \(ppt\/slides\/slide2\.xml\) is not well-formed XML/);
  });

  it('fails a part whose checksum does not match, naming the part', async () => {
    const r = await failure(
      rezip('deck-pandoc.pptx', (entries) => entries.map((e) => (e.name === 'ppt/slides/slide1.xml' ? { ...e, crc: e.crc ^ 1 } : e))),
    );
    expect(r.reason).toBe(
      "the PPTX file's part ppt/slides/slide1.xml is damaged (its size or checksum does not match the zip's): the file is truncated or corrupt",
    );
  });

  it('fails a zip that declares more than the expanded-size limit, before inflating', async () => {
    const liar = { ...deflated('ppt/slides/huge.xml', 'tiny'), declaredSize: 600 * 1024 * 1024 };
    const r = await failure(rezip('deck-pandoc.pptx', (entries) => [...entries, liar]));
    expect(r.reason).toMatch(/declares 600\.\d MiB uncompressed, past the limit of 512 MiB: a zip bomb, or raise maxExpandedBytes/);
  });

  it('does not count media it never reads against the limit (a deck with a large video)', async () => {
    const video = { ...deflated('ppt/media/media1.mp4', 'not really a video'), declaredSize: 600 * 1024 * 1024 };
    expect(await convert(rezip('deck-pandoc.pptx', (entries) => [...entries, video]))).toMatchObject({ ok: true, units: 4 });
  });

  it('stops a part that inflates past its declared size (a lying header)', async () => {
    const bomb = { ...bombPart('ppt/slides/slide2.xml', 4 * 1024 * 1024), declaredSize: 1000 };
    const r = await failure(rezip('deck-pandoc.pptx', (entries) => entries.map((e) => (e.name === bomb.name ? bomb : e))));
    expect(r.reason).toMatch(/part ppt\/slides\/slide2\.xml inflates past the size its zip header declares: a zip bomb/);
  });

  it('fails a bomb past the limit, and a zip with too many entries, naming the limit', async () => {
    const bomb = rezip('deck-pandoc.pptx', (entries) => [...entries, bombPart('ppt/zeros.xml', 3 * 1024 * 1024)]);
    expect((await failure(bomb, { maxExpandedBytes: 2 * 1024 * 1024 })).reason).toMatch(/past the limit of 2 MiB: a zip bomb/);
    const many = zipOf(Array.from({ length: 50 }, (_, i) => stored(`x/${i}.txt`, 'x')));
    expect((await failure(new Uint8Array(many), { maxEntries: 40 })).reason).toMatch(/holds 50 entries, past the limit of 40/);
  });

  it('fails a slide nested past the depth limit, naming it', async () => {
    const deep = '<a:x>'.repeat(300) + '</a:x>'.repeat(300);
    const bytes = rezip('deck-pandoc.pptx', (entries) =>
      entries.map((e) => (e.name === 'ppt/slides/slide3.xml' ? deflated(e.name, inflate(e).replace('<p:cSld>', `<p:cSld>${deep}`)) : e)),
    );
    expect((await failure(bytes)).reason).toMatch(/slide 3's XML \(ppt\/slides\/slide3\.xml\) nests elements more than 256 deep/);
  });
});

import { inflateRawSync } from 'node:zlib';
function inflate(e: { stored: Buffer; method: number }): string {
  return (e.method === 8 ? inflateRawSync(e.stored) : e.stored).toString('utf8');
}
