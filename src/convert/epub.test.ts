import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { convertEpub } from './epub.js';
import { DEFAULT_CONVERT_LIMITS, type ConvertLimits, type ConvertResult } from './types.js';
import { bombPart, deflated, fixture, rezip, type ZipEntry } from './zip.test-util.js';

type Failure = Extract<ConvertResult, { ok: false }>;
const convert = (bytes: Uint8Array, limits: Partial<ConvertLimits> = {}): Promise<ConvertResult> =>
  convertEpub(bytes, { name: 'book.epub', limits: { ...DEFAULT_CONVERT_LIMITS, ...limits } });

async function markdown(bytes: Uint8Array): Promise<string> {
  const r = await convert(bytes);
  if (!r.ok) throw new Error(r.reason);
  return r.markdown;
}

async function failure(bytes: Uint8Array, limits: Partial<ConvertLimits> = {}): Promise<Failure> {
  const r = await convert(bytes, limits);
  expect(r.ok).toBe(false);
  return r as Failure;
}

const inflate = (e: ZipEntry): string => (e.method === 8 ? inflateRawSync(e.stored) : e.stored).toString('utf8');
const withPart = (name: string, change: (text: string) => string): Uint8Array =>
  rezip('book-epub3.epub', (entries) => entries.map((e) => (e.name === name ? deflated(e.name, change(inflate(e))) : e)));

describe.each(['book-epub3.epub', 'book-epub2.epub'])('convertEpub on %s', (name) => {
  it('writes the title, the author and the chapters in spine order with their headings, lists, table, code and notes', async () => {
    const r = await convert(fixture(name));
    expect(r).toMatchObject({ ok: true, units: 3 });
    const md = (r as { markdown: string }).markdown;
    expect(md.startsWith('# The Lighthouse Keeper’s Log\n\nMarta Quay\n\n# The First Winter\n')).toBe(true);
    expect(md.split('\n').filter((l) => l.startsWith('#'))).toEqual([
      '# The Lighthouse Keeper’s Log',
      '# The First Winter',
      '## Stores',
      '# The Wreck of the Aurora',
      '# Spring',
    ]);
    expect(md).toContain('- Oil for the lamp\n  - Colza oil in the first year\n  - Paraffin later\n- Biscuits and salt fish\n');
    expect(md).toContain('| Month | Storms | Ships |\n| --- | --- | --- |\n| December | 4 | 11 |\n| January | 7 | 3 |\n');
    expect(md).toContain('every evening.[^fn1] The keeper');
    expect(md).toContain('[^fn1]: Except on the night of the great storm.\n');
    expect(md).not.toContain('↩');
    expect(md).toContain('```\nlog: 03:10 signal seen\nlog: 03:25 boat launched\n```\n');
    expect(md).toContain('1. Launch the boat\n2. Count the crew\n');
    expect(md).toContain('Ελληνικά, café and Grüße');
  });

  it('gives byte-identical Markdown for the same bytes', async () => {
    const [a, b] = [await markdown(fixture(name)), await markdown(fixture(name))];
    expect(a).toBe(b);
    expect(a.endsWith('\n') && !a.endsWith('\n\n')).toBe(true);
    expect(a).not.toMatch(/[ \t]$/m);
    expect(a).not.toMatch(/\n\n\n/);
  });
});

describe('convertEpub: order, navigation, external resources', () => {
  it('follows the spine, not the manifest or the file names', async () => {
    const bytes = withPart('EPUB/content.opf', (opf) =>
      opf
        .replace('<itemref idref="ch001_xhtml" />', '')
        .replace('<itemref idref="ch003_xhtml" />', '<itemref idref="ch003_xhtml" /><itemref idref="ch001_xhtml" />'),
    );
    const headings = (await markdown(bytes)).split('\n').filter((l) => /^# /.test(l));
    expect(headings).toEqual(['# The Lighthouse Keeper’s Log', '# The Wreck of the Aurora', '# Spring', '# The First Winter']);
  });

  it('drops the navigation document even when the spine lists it', async () => {
    const bytes = withPart('EPUB/content.opf', (opf) =>
      opf.replace('<itemref idref="ch001_xhtml" />', '<itemref idref="nav" /><itemref idref="ch001_xhtml" />'),
    );
    const md = await markdown(bytes);
    expect(md.match(/The First Winter/g)).toHaveLength(1);
  });

  it("drops a table of contents carried as a chapter, and the guide's cover and toc", async () => {
    const toc =
      '<html><body><h3>Table of Contents</h3><p><a href="ch001.xhtml">The First Winter</a></p><p><a href="ch002.xhtml#x">The Wreck</a></p></body></html>';
    const bytes = rezip('book-epub3.epub', (entries) =>
      entries.map((e) => {
        if (e.name === 'EPUB/text/title_page.xhtml') return deflated(e.name, toc);
        if (e.name === 'EPUB/content.opf')
          return deflated(
            e.name,
            inflate(e).replace('<reference type="toc"', '<reference type="cover" href="text/ch003.xhtml"/><reference type="toc"'),
          );
        return e;
      }),
    );
    const md = await markdown(bytes);
    expect(md).not.toContain('Table of Contents');
    expect(md.match(/The First Winter/g)).toHaveLength(1);
    expect(md).not.toContain('# Spring');
  });

  it('ignores images and stylesheets that point elsewhere, and expands no declared entity', async () => {
    const bytes = withPart('EPUB/text/ch003.xhtml', (x) =>
      x
        .replace('<!DOCTYPE html>', '<!DOCTYPE html [<!ENTITY boom "BOOMBOOM">]>')
        .replace('</head>', '<link rel="stylesheet" href="http://example.invalid/s.css" /></head>')
        .replace('The ice broke', '<img src="http://example.invalid/ice.png" alt="" />The&nbsp;ice &boom; broke'),
    );
    const md = await markdown(bytes);
    expect(md).toContain('The ice &boom; broke in April');
    expect(md).not.toContain('example.invalid');
    expect(md).not.toContain('BOOMBOOM');
  });
});

describe('convertEpub: hostile and damaged files', () => {
  const encryption = (algorithm: string, uri: string): string =>
    `<?xml version="1.0"?><encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="${algorithm}"/><enc:CipherData><enc:CipherReference URI="${uri}"/></enc:CipherData></enc:EncryptedData></encryption>`;

  it('reports encrypted chapters (DRM) as encrypted, but reads a book whose fonts are only obfuscated', async () => {
    const drm = rezip('book-epub3.epub', (entries) => [
      ...entries,
      deflated('META-INF/encryption.xml', encryption('http://www.w3.org/2001/04/xmlenc#aes128-cbc', 'EPUB/text/ch001.xhtml')),
    ]);
    const r = await failure(drm);
    expect(r.skip).toBe('encrypted');
    expect(r.reason).toMatch(/EPUB\/text\/ch001\.xhtml with http:\/\/www\.w3\.org\/2001\/04\/xmlenc#aes128-cbc/);
    const fonts = rezip('book-epub3.epub', (entries) => [
      ...entries,
      deflated('META-INF/encryption.xml', encryption('http://www.idpf.org/2008/embedding', 'EPUB/fonts/a.otf')),
    ]);
    expect((await convert(fonts)).ok).toBe(true);
  });

  it('fails a truncated EPUB naming the central directory', async () => {
    const bytes = fixture('book-epub3.epub');
    expect((await failure(bytes.slice(0, bytes.length - 100))).reason).toMatch(
      /central directory is missing: the file is truncated or not an EPUB/,
    );
  });

  it('fails files that are not EPUBs', async () => {
    expect((await failure(fixture('report.odt'))).reason).toMatch(
      /mimetype says application\/vnd\.oasis\.opendocument\.text, not application\/epub\+zip/,
    );
    expect((await failure(fixture('deck-pandoc.pptx'))).reason).toMatch(
      /neither a mimetype nor META-INF\/container\.xml: it is not an EPUB/,
    );
    expect((await failure(fixture('report.doc'))).reason).toMatch(/OLE2/);
  });

  it('fails a chapter the spine names but the zip lacks, naming it', async () => {
    const bytes = rezip('book-epub3.epub', (entries) => entries.filter((e) => e.name !== 'EPUB/text/ch002.xhtml'));
    expect((await failure(bytes)).reason).toBe("chapter 3 (EPUB/text/ch002.xhtml) is in the EPUB's spine but not in its zip");
  });

  it('fails a package document that is not well-formed, and a chapter nested past the limit', async () => {
    expect((await failure(withPart('EPUB/content.opf', (opf) => opf.slice(0, opf.length - 40)))).reason).toMatch(
      /^the EPUB's package document \(EPUB\/content\.opf\) is not well-formed XML/,
    );
    const deep = withPart('EPUB/text/ch002.xhtml', (x) =>
      x.replace('<body', `<body><div>${'<div>'.repeat(400)}deep${'</div>'.repeat(400)}</div></body><body`),
    );
    expect((await failure(deep)).reason).toMatch(/chapter 3 \(EPUB\/text\/ch002\.xhtml\) nests elements more than 256 deep/);
  });

  it('fails a zip bomb naming the limit', async () => {
    const bytes = rezip('book-epub3.epub', (entries) => [...entries, bombPart('EPUB/zeros.xhtml', 3 * 1024 * 1024)]);
    expect((await failure(bytes, { maxExpandedBytes: 2 * 1024 * 1024 })).reason).toMatch(/past the limit of 2 MiB: a zip bomb/);
  });
});
