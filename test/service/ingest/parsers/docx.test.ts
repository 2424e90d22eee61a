import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MIB } from '../../../../src/shared/plans.js';
import { chunkDocument } from '../../../../src/service/ingest/chunker.js';
import { DEFAULT_ZIP_LIMITS } from '../../../../src/service/ingest/office-zip.js';
import { parseContent, parseFailure } from '../test-support.js';
import { docxParser, docxParserWith } from '../../../../src/service/ingest/parsers/docx.js';
import { describeMammothError } from '../../../../src/service/ingest/parsers/office-messages.js';
import {
  bombDocument,
  deflated,
  docxEntries,
  docxOf,
  documentXml,
  paragraph,
  table,
  zipOf,
} from '../../../../src/service/ingest/parsers/office-files.test-util.js';

const chunksOf = async (docx: Buffer): Promise<string[]> => chunkDocument({ sections: await parseContent(docxParser, 'a.docx', docx) });

describe('docx parser', () => {
  it('heads each chunk with its heading path', async () => {
    const docx = docxOf(
      [
        paragraph('Guide', 1),
        paragraph('Read this first.'),
        paragraph('Install', 2),
        paragraph('Run the installer.'),
        paragraph('Linux', 3),
        paragraph('Use the package.'),
        paragraph('Usage', 2),
        paragraph('Start the app.'),
      ].join(''),
    );

    expect(await chunksOf(docx)).toEqual([
      'Guide\nRead this first.',
      'Guide > Install\nRun the installer.',
      'Guide > Install > Linux\nUse the package.',
      'Guide > Usage\nStart the app.',
    ]);
  });

  it('keeps Unicode text, and tables as rows of cells', async () => {
    const docx = docxOf(
      paragraph('Zürich, 北京, ʤ and 🙂') +
        table([
          ['Name', 'Role'],
          ['Åsa', 'Ingénieure'],
        ]),
    );

    expect(await chunksOf(docx)).toEqual(['Zürich, 北京, ʤ and 🙂\n\nName | Role\nÅsa | Ingénieure']);
  });

  it('splits a huge paragraph into chunks under the limit, losing no word', async () => {
    const words = Array.from({ length: 60_000 }, (_, i) => `w${i}`);
    const chunks = await chunksOf(docxOf(paragraph(words.join(' '))));

    expect(chunks.length).toBeGreaterThan(100);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(1500);
    const seen = new Set(chunks.flatMap((c) => c.split(/\s+/)));
    expect(words.filter((w) => !seen.has(w))).toEqual([]);
  });

  it('succeeds with no chunks for an empty body', async () => {
    expect(await chunksOf(docxOf(''))).toEqual([]);
  });

  it('never inflates media: a zip bomb stored as an image does not stop the document', async () => {
    const image = await bombDocument(200 * MIB);
    const docx = docxOf(paragraph('The text beside the picture.'), [{ ...image, name: 'word/media/image1.png' }]);

    expect(await chunksOf(docx)).toEqual(['The text beside the picture.']);
  });

  it('fails a file that is not a ZIP archive', async () => {
    const message = await parseFailure(parseContent(docxParser, 'a.docx', 'Just some text, saved as .docx by mistake.'));

    expect(message).toBe(
      'not a valid DOCX file: the ZIP archive is truncated or damaged (its end-of-central-directory record is missing); upload the complete file again',
    );
  });
});

describe('docx zip limits (hostile archives)', () => {
  it('refuses a part whose declared size is over the limit, before inflating it', async () => {
    const docx = zipOf(docxEntries(await bombDocument(300 * MIB)));

    const message = await parseFailure(parseContent(docxParser, 'bomb.docx', docx));

    expect(docx.length).toBeLessThan(2 * MIB);
    expect(message).toMatch(
      /^the DOCX part word\/document\.xml declares 300\.0 MiB uncompressed, over the 8\.0 MiB limit for one part; refused as a possible zip bomb/,
    );
  });

  it('refuses a part that inflates past the size it declares, at that size', async () => {
    const docx = zipOf(docxEntries(await bombDocument(300 * MIB, 4096)));

    const message = await parseFailure(parseContent(docxParser, 'liar.docx', docx));

    expect(message).toMatch(
      /^the DOCX part word\/document\.xml inflates past its declared size of 4\.0 KiB; refused as a damaged or hostile archive/,
    );
  });

  it('refuses a part that inflates over the ratio limit, even under the size limit', async () => {
    const docx = zipOf(docxEntries(await bombDocument(6 * MIB)));

    const message = await parseFailure(parseContent(docxParser, 'dense.docx', docx));

    expect(message).toMatch(
      /^the DOCX part word\/document\.xml inflates \d+ times \(\d+\.\d KiB to 5\.0 MiB\), over the limit of 200; refused as a possible zip bomb$/,
    );
  });

  it('refuses parts that together declare more than the total limit', async () => {
    // Random hex: it compresses about 2 to 1, far from the ratio limit.
    const body = Array.from({ length: 2000 }, () => paragraph(randomBytes(500).toString('hex'))).join('');
    const docx = docxOf(body, [
      deflated('word/glossary/document.xml', documentXml(body)),
      deflated('customXml/item1.xml', documentXml(body)),
    ]);
    const parser = docxParserWith({ ...DEFAULT_ZIP_LIMITS, maxPartBytes: 3 * MIB, maxTotalBytes: 5 * MIB });

    const message = await parseFailure(parseContent(parser, 'many.docx', docx));

    expect(message).toMatch(
      /^the DOCX parts declare \d\.\d MiB uncompressed in all, over the 5\.0 MiB limit; refused as a possible zip bomb/,
    );
  });

  it('refuses an archive of too many entries', async () => {
    const entries = [
      ...docxEntries(deflated('word/document.xml', documentXml(paragraph('hi')))),
      ...Array.from({ length: 10_001 }, (_, i) => deflated(`customXml/item${i}.xml`, '<a/>')),
    ];

    const message = await parseFailure(parseContent(docxParser, 'swarm.docx', zipOf(entries)));

    expect(message).toBe('the DOCX archive holds 10006 entries, over the limit of 10000; refused as a possible zip bomb');
  });

  it('refuses a password-protected document (an OLE container) as such', async () => {
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]);

    const message = await parseFailure(parseContent(docxParser, 'secret.docx', ole));

    expect(message).toMatch(/^the DOCX file is password-protected \(encrypted\) or is an older binary Office file renamed/);
  });
});

describe('docx failures read as sentences', () => {
  it("refuses a DTD (an XXE) naming the part, without the XML library's raw text", async () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${documentXml(paragraph('&xxe;')).replace(/^<\?xml[^>]*>/, '')}`;
    const docx = zipOf(docxEntries(deflated('word/document.xml', xxe.replace('&amp;xxe;', '&xxe;'))));

    const message = await parseFailure(parseContent(docxParser, 'a.docx', docx));

    expect(message).toBe(
      'the DOCX part word/document.xml declares a DTD (<!DOCTYPE>), which Office never writes; refused, as its entities could read other files or expand without bound. Open the file in Office or LibreOffice, save it again and upload that copy',
    );
  });

  it("writes mammoth's xmldom errors without their tags and empty locations", () => {
    expect(describeMammothError('error: [xmldom error]\tentity not found:&foo;\n@#[line:undefined,col:undefined]')).toBe(
      'could not read the DOCX document (entity not found:&foo;); open it in Word or LibreOffice, save it again and upload that copy',
    );
  });
});
