import { createWriteStream, writeFileSync } from 'node:fs';
import * as XLSX from '@e965/xlsx';
import { zipSync, strToU8 } from 'fflate';
import { parquetWriteBuffer } from 'hyparquet-writer';

/**
 * Generated files of each of the service's twelve formats, for the per-format ingest benchmark
 * (bench/ingest-formats.ts): about `bytes` of content each (text formats to the byte; zipped and
 * binary formats by the size of what they hold, so their files are smaller; an XLS sheet stops at
 * 65,535 rows, about 4.5 MiB), deterministic
 * (a seeded word picker), shaped as the parsers expect real files: headings and paragraphs for
 * prose, a header and rows for tables, objects for JSON, elements with attributes for XML.
 */
export const FORMATS = ['txt', 'md', 'csv', 'tsv', 'json', 'jsonl', 'html', 'xml', 'docx', 'xlsx', 'xls', 'parquet'] as const;
export type Format = (typeof FORMATS)[number];

const WORDS =
  'the quick brown fox jumps over a lazy dog while the river tide turns under moon and harbor lantern light copper meadow signal archive'.split(
    ' ',
  );

/** A seeded word picker and sentence maker. */
function words(): { word: () => string; sentence: () => string } {
  let seed = 42;
  const word = (): string => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return WORDS[seed % WORDS.length] as string;
  };
  const sentence = (): string => {
    const n = 6 + (word().length % 9);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(word());
    return `${out.join(' ')}.`;
  };
  return { word, sentence };
}

/** Writes lines from `line(i)` until `bytes` are written (streamed: a 200 MiB file never sits in memory). */
async function writeLines(path: string, bytes: number, line: (i: number) => string, tail = ''): Promise<void> {
  const out = createWriteStream(path);
  let written = 0;
  for (let i = 0; written < bytes; i++) {
    const l = line(i);
    written += Buffer.byteLength(l);
    if (!out.write(l)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end(tail, (err?: Error | null) => (err ? reject(err) : resolve())));
}

/** Table rows of about `bytes` in all (at most `maxRows`): [id, name, city, notes]. */
function rows(bytes: number, maxRows = Infinity): (string | number)[][] {
  const { word, sentence } = words();
  const out: (string | number)[][] = [];
  for (let size = 0, i = 1; size < bytes && i <= maxRows; i++) {
    const row = [i, `Person ${i}`, `City ${i % 997}`, `${sentence()} ${word()}`];
    size += row.join(',').length + 1;
    out.push(row);
  }
  return out;
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A minimal DOCX (content types, relationships, heading styles) whose body has headings and paragraphs. */
function docx(bytes: number): Uint8Array {
  const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  const { sentence } = words();
  const body: string[] = [];
  for (let size = 0, i = 0; size < bytes; i++) {
    const p =
      i % 40 === 0
        ? `<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>Section ${i / 40}</w:t></w:r></w:p>`
        : `<w:p><w:r><w:t xml:space="preserve">${escapeXml(`${sentence()} ${sentence()}`)}</w:t></w:r></w:p>`;
    size += p.length;
    body.push(p);
  }
  const rels = (target: string, type: string): string =>
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/${type}" Target="${target}"/></Relationships>`;
  return zipSync({
    '[Content_Types].xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`,
    ),
    '_rels/.rels': strToU8(rels('word/document.xml', 'officeDocument/2006/relationships/officeDocument')),
    'word/_rels/document.xml.rels': strToU8(rels('styles.xml', 'officeDocument/2006/relationships/styles')),
    'word/styles.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles xmlns:w="${W}"><w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>`,
    ),
    'word/document.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}"><w:body>${body.join('')}</w:body></w:document>`,
    ),
  });
}

/** An XLS (BIFF8) sheet holds at most 65,536 rows. */
const XLS_MAX_ROWS = 65_535;

function workbook(bytes: number, bookType: 'xlsx' | 'biff8'): Buffer {
  const wb = XLSX.utils.book_new();
  const data = rows(bytes, bookType === 'biff8' ? XLS_MAX_ROWS : Infinity);
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['id', 'name', 'city', 'notes'], ...data]), 'People');
  return XLSX.write(wb, { type: 'buffer', bookType, compression: true }) as Buffer;
}

function parquet(bytes: number): Uint8Array {
  return new Uint8Array(parquetBuffer(bytes));
}

function parquetBuffer(bytes: number): ArrayBuffer {
  const r = rows(bytes);
  return parquetWriteBuffer({
    columnData: [
      { name: 'id', data: r.map((x) => x[0] as number), type: 'INT32' },
      { name: 'name', data: r.map((x) => x[1] as string), type: 'STRING' },
      { name: 'city', data: r.map((x) => x[2] as string), type: 'STRING' },
      { name: 'notes', data: r.map((x) => x[3] as string), type: 'STRING' },
    ],
    rowGroupSize: 10_000,
  });
}

/** Writes a generated `format` file of about `bytes` of content to `path`. */
export async function writeFormatFile(path: string, format: Format, bytes: number): Promise<void> {
  const { word, sentence } = words();
  const person = (i: number): Record<string, unknown> => ({
    id: i,
    name: `Person ${i}`,
    tags: [word(), word()],
    address: { city: `City ${i % 997}` },
    note: sentence(),
  });
  switch (format) {
    case 'txt':
      return writeLines(path, bytes, (i) => (i % 5 === 4 ? '\n' : `${sentence()} ${sentence()}\n`));
    case 'md':
      return writeLines(path, bytes, (i) =>
        i % 60 === 0 ? `\n## Section ${i / 60}\n\n` : i % 5 === 4 ? '\n' : `${sentence()} ${sentence()}\n`,
      );
    case 'csv':
    case 'tsv': {
      const sep = format === 'csv' ? ',' : '\t';
      return writeLines(path, bytes, (i) =>
        i === 0 ? ['id', 'name', 'city', 'notes'].join(sep) + '\n' : [i, `Person ${i}`, `City ${i % 997}`, sentence()].join(sep) + '\n',
      );
    }
    case 'jsonl':
      return writeLines(path, bytes, (i) => `${JSON.stringify(person(i))}\n`);
    case 'json':
      return writeLines(path, bytes, (i) => `${i === 0 ? '[' : ','}${JSON.stringify(person(i))}\n`, ']');
    case 'html':
      await writeLines(
        path,
        bytes,
        (i) =>
          i === 0
            ? '<!doctype html><html><head><title>Bench</title><style>p{margin:0}</style><script>var x=1;</script></head><body><nav><a href="/">Home</a></nav><main>\n'
            : i % 40 === 0
              ? `<h2>Section ${i / 40}</h2>\n`
              : `<p>${sentence()} <b>${word()}</b> ${sentence()}</p>\n`,
        '</main></body></html>\n',
      );
      return;
    case 'xml':
      await writeLines(
        path,
        bytes,
        (i) =>
          i === 0
            ? '<?xml version="1.0"?>\n<catalog>\n'
            : `<item id="${i}"><name>Person ${i}</name><city>City ${i % 997}</city><note>${sentence()}</note></item>\n`,
        '</catalog>\n',
      );
      return;
    case 'docx':
      return writeFileSync(path, docx(bytes));
    case 'xlsx':
      return writeFileSync(path, workbook(bytes, 'xlsx'));
    case 'xls':
      return writeFileSync(path, workbook(bytes, 'biff8'));
    case 'parquet':
      return writeFileSync(path, parquet(bytes));
  }
}
