import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../../src/service/ingest/chunker.js';
import { parseContent, parseFailure } from '../test-support.js';
import type { Section } from '../../../../src/service/ingest/types.js';
import { xmlParser } from '../../../../src/service/ingest/parsers/xml.js';

const parse = (xml: string | Buffer): Promise<Section[]> => parseContent(xmlParser, 'data.xml', xml);
const chunksOf = async (xml: string | Buffer): Promise<string[]> => chunkDocument({ sections: await parse(xml) });

describe('xml parser', () => {
  it('makes each record-like element one record, headed by its element path', async () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
      <catalog xmlns:dc="http://purl.org/dc/elements/1.1/">
        <book id="b1"><title>Zürich &amp; Basel</title><dc:creator>Åsa</dc:creator><price currency="EUR">12.50</price></book>
        <book id="b2"><title><![CDATA[Tags like <b> stay text]]></title><year>2024</year></book>
      </catalog>`;

    expect(await parse(xml)).toEqual([
      {
        heading: 'catalog > book',
        records: [
          'id: b1; title: Zürich & Basel; dc:creator: Åsa; price: 12.50 (currency: EUR)',
          'id: b2; title: Tags like <b> stay text; year: 2024',
        ],
      },
    ]);
  });

  it('reads mixed content as prose under its path, and nested containers by their own paths', async () => {
    const xml = `<doc><meta><author>Ann</author></meta><body><section><title>Intro</title>
      <para>The <em>first</em> point &#8212; stated &#x263A;.</para></section></body></doc>`;

    expect(await chunksOf(xml)).toEqual([
      'doc > meta\nauthor: Ann',
      'doc > body > section\ntitle: Intro',
      'doc > body > section > para\nThe first point — stated ☺.',
    ]);
  });

  it('succeeds with no chunks for an empty file or an empty root', async () => {
    expect(await chunksOf('')).toEqual([]);
    expect(await chunksOf('<?xml version="1.0"?><root/>')).toEqual([]);
  });

  it('fails malformed XML naming the line and column', async () => {
    expect(await parseFailure(parse('<a>\n  <b>text</a>'))).toBe(
      "invalid XML: line 2, column 10: Expected closing tag 'b' (opened in line 2, col 3) instead of closing tag 'a'; fix the document (or save it again from the program that wrote it) and upload it again",
    );
  });

  it('refuses a billion-laughs DTD without expanding anything', async () => {
    const lols = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('\n');
    const xml = `<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol0 "lol">\n${lols}\n]>\n<lolz>&lol9;</lolz>`;

    expect(await parseFailure(parse(xml))).toBe(
      'the XML document\'s DTD declares entity "lol1" in terms of other entities; refused as a possible entity-expansion bomb (entities are never expanded). Remove the entity declarations and upload it again',
    );
  });

  it('leaves a declared entity unexpanded and reads the rest', async () => {
    const xml = '<!DOCTYPE note [<!ENTITY company "Example Corp">]><note><to>Ann</to><from>&company;</from></note>';

    expect(await chunksOf(xml)).toEqual(['note\nto: Ann; from: &company;']);
  });

  it('fails elements nested deeper than the limit', async () => {
    const xml = `${'<a>'.repeat(300)}x${'</a>'.repeat(300)}`;

    expect(await parseFailure(parse(xml))).toBe(
      "XML elements nested more than 256 deep, over kbsync's limit; refused (is the file generated or hostile?): flatten the structure and upload it again",
    );
  });

  it.each([10_000, 100_000])('fails elements nested %i deep with the same limit', async (depth) => {
    expect(await parseFailure(parse(`${'<a>'.repeat(depth)}x${'</a>'.repeat(depth)}`))).toMatch(/^XML elements nested more than 256 deep/);
  });

  it.each([
    [
      'a parameter entity',
      '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY % ext SYSTEM "http://example.com/x.dtd"> %ext;]><d>x</d>',
      'the XML document\'s DTD declares the parameter entity "%ext;", which kbsync does not read (DTDs are not processed); remove it from the DOCTYPE and upload the file again',
    ],
    [
      'an external entity (XXE)',
      '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><d>&xxe;</d>',
      'the XML document\'s DTD declares the external entity "xxe", which would read another file; refused (kbsync never reads files a document points to). Put the text in the document itself and upload it again',
    ],
  ])('refuses %s in a sentence that says what to do', async (_label, xml, message) => {
    expect(await parseFailure(parse(xml))).toBe(message);
  });

  it('fails a file over the whole-document limit before reading it', async () => {
    const xml = `<r>${'<i>x</i>'.repeat(200_000)}</r>`;

    expect(await parseFailure(parseContent(xmlParser, 'big.xml', xml, { maxWholeFileBytes: 1_048_576 }))).toBe(
      'XML file is 1.5 MiB, over the 1 MiB limit for an XML document (it is read whole); split it',
    );
  });
});
