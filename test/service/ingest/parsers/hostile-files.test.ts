import { execFile } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync, writeFileSync, ftruncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../helpers/build-dist.js';
import { printFigures } from '../../../helpers/figures.js';
import { MIB } from '../../../../src/shared/plans.js';
import { bombDocument, deflated, docxEntries, zipOf } from '../../../../src/service/ingest/parsers/office-files.test-util.js';

// Hostile files, each parsed by the compiled parsers (dist/, built by the test setup) in a child
// process of its own, which reports its peak RSS before and after: the file must fail with a clear
// error, and the parse must not have grown the process by more than MAX_GROWTH_MIB. Without the
// limits, the same files cost hundreds of MB to GBs (figures in docs/service.md).

// A quarter of the 1 GiB files: far below what reading one whole costs (a parser that does dies of the
// child's old-space cap), and above what a streaming parse's buffers and young generation take on a
// busy machine, with room for the load to move the peak.
const MAX_GROWTH_MIB = 256;
const GIB = 1024 * MIB;

const CHILD = `
const { pathToFileURL } = await import('node:url');
const [registry, name, path] = process.argv.slice(1);
const { parserFor } = await import(pathToFileURL(registry).href);
const before = process.resourceUsage().maxRSS;
let result;
try {
  let sections = 0;
  for await (const _ of parserFor(name).parse(path)) sections++;
  result = { sections };
} catch (err) {
  result = { code: err.code, message: err.message };
}
console.log(JSON.stringify({ ...result, beforeKiB: before, peakKiB: process.resourceUsage().maxRSS }));
`;

type ChildResult = { code?: string; message?: string; sections?: number; beforeKiB: number; peakKiB: number };

function parseInChild(name: string, path: string): Promise<ChildResult> {
  const registry = join(REPO_ROOT, 'dist', 'service', 'ingest', 'registry.js');
  return new Promise((resolve, reject) => {
    // The old generation is capped: garbage must be collected rather than left to pile up while the
    // machine is busy (so the peak measures what the parser holds, not the load), and a parser that
    // really holds the file dies of it, failing the test.
    execFile(
      process.execPath,
      ['--max-old-space-size=96', '--input-type=module', '-e', CHILD, registry, name, path],
      { maxBuffer: MIB },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as ChildResult);
      },
    );
  });
}

let dir: string;

/** A 1 GiB file that is one line: 70,000 bytes of `prefix` then a hole (zero bytes) the file system does not store. */
function sparseGigabyte(name: string, prefix: string): string {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, prefix.repeat(Math.ceil(70_000 / prefix.length)));
    ftruncateSync(fd, GIB);
  } finally {
    closeSync(fd);
  }
  return path;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kbsync-hostile-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function expectRefusedWithin(name: string, path: string, error: RegExp): Promise<void> {
  const r = await parseInChild(name, path);
  const growthMiB = Math.round((r.peakKiB - r.beforeKiB) / 1024);
  printFigures(`hostile ${name}`, { growthMiB, peakMiB: Math.round(r.peakKiB / 1024) });

  expect(r.code, JSON.stringify(r)).toBe('parse_failed');
  expect(r.message).toMatch(error);
  expect(growthMiB).toBeLessThan(MAX_GROWTH_MIB);
}

describe('hostile files are refused within bounded memory', () => {
  it('a DOCX zip bomb that declares its 300 MiB', async () => {
    const path = join(dir, 'honest-bomb.docx');
    writeFileSync(path, zipOf(docxEntries(await bombDocument(300 * MIB))));

    await expectRefusedWithin('honest-bomb.docx', path, /declares 300\.0 MiB uncompressed, over the 8\.0 MiB limit/);
  });

  it('a DOCX zip bomb that declares 4 KiB and inflates to 300 MiB', async () => {
    const path = join(dir, 'lying-bomb.docx');
    writeFileSync(path, zipOf(docxEntries(await bombDocument(300 * MIB, 4096))));

    await expectRefusedWithin('lying-bomb.docx', path, /inflates past its declared size of 4\.0 KiB/);
  });

  it('an XLSX whose sheet declares 4 KiB and inflates to 300 MiB', async () => {
    const sheet = { ...(await bombDocument(300 * MIB, 4096)), name: 'xl/worksheets/sheet1.xml' };
    const path = join(dir, 'lying-bomb.xlsx');
    writeFileSync(path, zipOf([deflated('[Content_Types].xml', '<Types/>'), sheet]));

    await expectRefusedWithin(
      'lying-bomb.xlsx',
      path,
      /^the XLSX part xl\/worksheets\/sheet1\.xml inflates past its declared size of 4\.0 KiB/,
    );
  });

  it('an XML billion laughs', async () => {
    const lols = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('\n');
    const path = join(dir, 'lolz.xml');
    writeFileSync(path, `<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol0 "lol">\n${lols}\n]>\n<lolz>&lol9;</lolz>`);

    await expectRefusedWithin('lolz.xml', path, /refused as a possible entity-expansion bomb/);
  });

  it.each([
    ['one-line.txt', 'a', /^line 1: longer than 16777216 characters; break it into shorter lines/],
    ['one-line.md', 'a', /^line 1: longer than 16777216 characters; break it into shorter lines/],
    ['one-line.jsonl', 'a', /^line 1: longer than 16777216 characters; break it into shorter lines/],
    ['one-line.csv', 'a', /^invalid CSV: line 1: a record is longer than 4 MiB/],
    ['one-line.tsv', 'a', /^invalid TSV: line 1: a record is longer than 4 MiB/],
    ['one-line.html', '<p>a', /^not an HTML file: NUL character at offset 7000\d/],
    ['one-line.json', '[', /^JSON file is 1024\.0 MiB, over the 32 MiB limit/],
    ['one-line.xml', '<a>', /^XML file is 1024\.0 MiB, over the 32 MiB limit/],
    ['one-line.xls', 'a', /^XLS file is 1024\.0 MiB, over the 32 MiB limit/],
    ['one-line.docx', 'a', /^not a valid DOCX file: the ZIP archive is truncated or damaged/],
    ['one-line.xlsx', 'a', /^not a valid XLSX file: the ZIP archive is truncated or damaged/],
    ['one-line.parquet', 'PAR1', /^not a Parquet file: it does not end with the "PAR1" magic/],
  ])('a 1 GiB single-line %s', async (name, prefix, error) => {
    await expectRefusedWithin(name, sparseGigabyte(name, prefix), error);
  });
});
