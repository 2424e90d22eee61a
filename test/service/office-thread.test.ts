import * as XLSX from '@e965/xlsx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deflated, docxEntries, documentXml, paragraph, zipOf } from '../../src/service/ingest/parsers/office-files.test-util.js';
import { apiFor, eventually, startHarness, upload, type Api, type Harness } from './helpers.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

/** A DOCX of about `bytes` of document.xml, of varied words (so that it compresses like prose, not like a zip bomb). */
function bigDocx(bytes: number): Buffer {
  const words = 'harbour lantern copper meadow signal archive river tide moon quick brown fox lazy dog'.split(' ');
  let seed = 7;
  const word = (): string => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return `${words[seed % words.length]}${seed % 97}`;
  };
  const parts: string[] = [];
  for (let size = 0, i = 0; size < bytes; i++) {
    const p = i % 50 === 0 ? paragraph(`Part ${i / 50}`, 2) : paragraph(Array.from({ length: 14 }, word).join(' '));
    parts.push(p);
    size += p.length;
  }
  return zipOf(docxEntries(deflated('word/document.xml', documentXml(parts.join('')))));
}

/** An XLSX of `rows` rows of four columns (varied text). */
function bigXlsx(rows: number): Buffer {
  const data: (string | number)[][] = [['id', 'name', 'city', 'note']];
  for (let i = 1; i <= rows; i++) data.push([i, `Person ${i}`, `City ${i % 997}`, `lantern ${i * 7919} copper ${i % 131} meadow`]);
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(data), 'People');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer;
}

const statusOf = async (api: Api, id: number): Promise<string | undefined> => {
  const list = await api.call('GET', '/api/v1/ext/files/');
  return (list.body.files as { id: number; status: string }[]).find((f) => f.id === id)?.status;
};

describe('office documents are parsed off the event loop', () => {
  it.each([
    ['DOCX', 'big.docx', () => bigDocx(6 * 1024 * 1024)],
    ['XLSX', 'big.xlsx', () => bigXlsx(150_000)],
  ])(
    'answers queries all along while a large %s is read, never held for most of its processing',
    async (_kind, name, make) => {
      const api = apiFor(h, { plan: 'pro', credits: 1_000_000 });
      await upload(api, 'small.md', '# Tides\n\nThe spring tide comes at noon.');
      await eventually(async () =>
        (await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'tide' } })).body.results?.length ? true : undefined,
      );

      const res = await upload(api, name, make());
      expect(res.status).toBe(201);
      const id = res.body.id as number;
      await eventually(async () => ((await statusOf(api, id)) === 'processing' ? true : undefined), 30_000);

      // Query until the file is processed; every answer is timed from the one before.
      const started = Date.now();
      let last = started;
      let longestWait = 0;
      let answered = 0;
      for (;;) {
        const q = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'spring tide' } });
        expect(q.status).toBe(200);
        expect(q.body.results[0].text).toContain('spring tide');
        const now = Date.now();
        longestWait = Math.max(longestWait, now - last);
        last = now;
        answered++;
        const status = await statusOf(api, id);
        if (status !== 'processing') {
          expect(status).toBe('processed');
          break;
        }
      }
      const processingMs = Date.now() - started;

      // On the event loop, mammoth held every request for the whole conversion, SheetJS for the reading of the
      // workbook; in the worker thread a request waits a small share of it.
      expect(answered).toBeGreaterThan(5);
      expect(longestWait).toBeLessThan(processingMs / 8);
    },
    120_000,
  );
});
