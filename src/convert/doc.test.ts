import { describe, expect, it } from 'vitest';
import { convertDoc } from './doc.js';
import { DEFAULT_CONVERT_LIMITS, type ConvertResult } from './types.js';
import { fixture } from './zip.test-util.js';

type Failure = Extract<ConvertResult, { ok: false }>;
const convert = (bytes: Uint8Array): Promise<ConvertResult> => convertDoc(bytes, { name: 'report.doc', limits: DEFAULT_CONVERT_LIMITS });

async function failure(bytes: Uint8Array): Promise<Failure> {
  const r = await convert(bytes);
  expect(r.ok).toBe(false);
  return r as Failure;
}

describe('convertDoc', () => {
  it('keeps headings by style, list levels, the table and the footnote', async () => {
    const r = await convert(fixture('report.doc'));
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
    expect(md).toContain(
      '| Station | Flow (m/s) | Notes |\n| --- | --- | --- |\n| North pier | 1.2 | Strong eddies |\n| Lighthouse | 0.8 | Calm |\n| Fish market | 2.4 | Pipe outfall nearby |\n',
    );
    expect(md).toContain('compared against the 1998 baseline.[^1]\n');
    expect(md.trimEnd().endsWith('[^1]: The baseline was published by the port authority in March 1998.')).toBe(true);
    expect(md).toContain('Grüße from Zürich; Ελληνικά; 日本語のテキスト.');
    expect(md).toContain('\n\\#5 is not a heading, and neither is this line’s start.\n');
  });

  it('ends the rows of a table too wide for its properties to fit the FKP (a huge PAPX in the Data stream)', async () => {
    const r = await convert(fixture('wide-table.doc'));
    const md = (r as { markdown: string }).markdown;
    expect(md).toContain(
      '| Pier | M1 | M2 | M3 | M4 | M5 | M6 | M7 | M8 | M9 | M10 | M11 |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n| North | 5 | 10 |',
    );
    expect(md).toContain('| East | 4 | 8 | 12 | 16 | 20 | 24 | 28 | 32 | 36 | 40 | 44 |\n\nAfter the table.\n');
  });

  it('keeps text with letter spacing and drops optional hyphens (word-extractor deletes the one and writes "undefined" for the other)', async () => {
    const r = await convert(fixture('spacing.doc'));
    expect((r as { markdown: string }).markdown).toBe(
      '# Tide tables\n\nCondensed letters still count as text. So do expanded ones.\n\nA breakwater has an optional hyphen.\n',
    );
  });

  it("drops fields' instructions even when their result runs over paragraphs, and a table of contents' result", async () => {
    const r = await convert(fixture('toc.doc'));
    expect((r as { markdown: string }).markdown).toBe(
      'Contents\n\n# Moorings\n\nEach berth has four bollards. See the berth plan for details.\n\n# Cranes\n\nTwo gantry cranes serve the container quay.\n',
    );
  });

  it('finds the WordDocument stream whatever the case of its name', async () => {
    const bytes = Buffer.from(fixture('report.doc'));
    const at = bytes.indexOf(Buffer.from('WordDocument', 'utf16le'));
    Buffer.from('worddocument', 'utf16le').copy(bytes, at);
    expect(await convert(new Uint8Array(bytes))).toMatchObject({
      ok: true,
      markdown: expect.stringContaining('# Harbour Survey Report\n'),
    });
  });

  it('gives byte-identical Markdown for the same bytes', async () => {
    const [a, b] = [await convert(fixture('report.doc')), await convert(fixture('report.doc'))];
    expect(a).toEqual(b);
    const md = (a as { markdown: string }).markdown;
    expect(md.endsWith('\n') && !md.endsWith('\n\n')).toBe(true);
    expect(md).not.toMatch(/[ \t]$/m);
  });

  it('reports a password-protected DOC as encrypted', async () => {
    const r = await failure(fixture('encrypted.doc'));
    expect(r).toEqual({
      ok: false,
      skip: 'encrypted',
      reason: 'the DOC file is password-protected (encrypted); remove the password and save it again',
    });
    expect((await failure(fixture('encrypted.pptx'))).skip).toBe('encrypted');
  });

  it('fails a truncated DOC naming its damaged structure', async () => {
    const bytes = fixture('report.doc');
    for (const cut of [bytes.length / 2, bytes.length - 512, 600]) {
      const r = await failure(bytes.slice(0, cut));
      expect(r.skip).toBe('convert-failed');
      expect(r.reason).toMatch(
        /^the (DOC file's structure is damaged \(.*\): the file is truncated or corrupt|OLE2 file has no WordDocument stream: it is truncated.*)$/,
      );
    }
  });

  it('says what a file saved "as .doc" by another program is', async () => {
    expect((await failure(fixture('report.rtf'))).reason).toBe('the file is an RTF document named .doc: give it the .rtf extension');
    const wordml = '<?xml version="1.0" encoding="UTF-8"?>\n<?mso-application progid="Word.Document"?>\n<w:wordDocument/>';
    expect((await failure(new TextEncoder().encode(wordml))).reason).toMatch(/^the file is a Word 2003 XML document named \.doc/);
    expect((await failure(new Uint8Array(0))).reason).toBe('the file is empty (0 bytes): it is not a DOC');
    // A Word 6.0/95 file: its FIB starts with 0xA5DC where Word 97 writes 0xA5EC.
    const word6 = Buffer.from(fixture('report.doc'));
    const fib = word6.indexOf(Buffer.from([0xec, 0xa5]), 512);
    word6[fib] = 0xdc;
    expect((await failure(new Uint8Array(word6))).reason).toBe(
      'the file is a Word 6.0/95 document, which is not read: save it as Word 97-2003 (.doc) or DOCX',
    );
  });

  it('fails files that are not Word 97-2003 documents', async () => {
    expect((await failure(fixture('report.odt'))).reason).toMatch(/is a zip package .*, not a DOC/);
    expect((await failure(new TextEncoder().encode('plain text, not a document'))).reason).toMatch(/not an OLE2 \(Word 97-2003\) document/);
    const ole = new Uint8Array(fixture('encrypted.pptx'));
    ole.set(
      new Uint8Array(Buffer.from('XncryptedPackage', 'utf16le')),
      Buffer.from(ole).indexOf(Buffer.from('EncryptedPackage', 'utf16le')),
    );
    expect((await failure(ole)).reason).toMatch(/has no WordDocument stream: it is truncated, or not a DOC/);
  });
});
