import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, eventually, startHarness, upload, type Api, type Harness } from './helpers.js';

// The new formats end to end through the HTTP API: upload a real sample, wait for processing, find
// its text with a query; a damaged one fails with its reason while the service keeps serving.
const REAL = fileURLToPath(new URL('../fixtures/real/', import.meta.url));

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

type FileRow = { id: number; status: string; error: string | null; chunk_count: number | null };

async function settled(api: Api, id: number): Promise<FileRow> {
  return eventually(async () => {
    const res = await api.call('GET', '/api/v1/ext/files/');
    const f = (res.body.files as FileRow[]).find((row) => row.id === id);
    return f !== undefined && (f.status === 'processed' || f.status === 'failed') ? f : undefined;
  });
}

describe('DOCX, XLSX, XLS, Parquet, HTML and XML through the service', () => {
  it.each([
    ['docx/tables.docx', 'report.docx', 'bottom right', 'Top left | Top right\nBottom left | Bottom right'],
    ['xlsx/table-multiple.xlsx', 'fruit.xlsx', 'banana quantity', 'Item: 2; Type: Banana; Quantity: 200'],
    ['xls/merged_range.xls', 'grid.xls', 'G4', 'G4'],
    ['parquet/delta_length_byte_array.parquet', 'fruit.parquet', 'apple_banana_mango998001', 'FRUIT: apple_banana_mango998001'],
  ])('%s is processed and its text is found by a query', async (sample, name, query, expected) => {
    const api = apiFor(h, { credits: 100 });

    const res = await upload(api, name, readFileSync(REAL + sample));
    const file = await settled(api, res.body.id);
    const hits = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query, top_k: 3 } });

    expect(res.status).toBe(201);
    expect(file).toMatchObject({ status: 'processed', error: null, chunk_count: expect.any(Number) });
    expect(hits.body.results[0]).toMatchObject({ knowledge_source_id: res.body.id, text: expect.stringContaining(expected) });
  });

  it.each([
    [
      'page.html',
      '<html><head><script>secret()</script></head><body><h1>Leave</h1><p>Ask your manager.</p></body></html>',
      'manager',
      'Leave\nAsk your manager.',
    ],
    [
      'feed.xml',
      '<feed><entry><title>Tide tables</title><updated>2025-01-01</updated></entry></feed>',
      'tide tables',
      'feed > entry\ntitle: Tide tables; updated: 2025-01-01',
    ],
  ])('%s is processed and its text is found by a query', async (name, content, query, expected) => {
    const api = apiFor(h, { credits: 100 });

    const res = await upload(api, name, content);
    const file = await settled(api, res.body.id);
    const hits = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query, top_k: 3 } });

    expect(file).toMatchObject({ status: 'processed', error: null });
    expect(hits.body.results[0]).toMatchObject({ knowledge_source_id: res.body.id, text: expected });
  });

  it('fails a damaged DOCX with its reason, and goes on processing and answering', async () => {
    const api = apiFor(h, { credits: 100 });

    const broken = await upload(api, 'broken.docx', readFileSync(REAL + 'docx/corrupt/tables.truncated.docx'));
    const encrypted = await upload(api, 'secret.xlsx', readFileSync(REAL + 'xlsx/corrupt/pass_protected.xlsx'));
    const after = await upload(api, 'notes.docx', readFileSync(REAL + 'docx/footnotes.docx'));

    expect(await settled(api, broken.body.id)).toMatchObject({
      status: 'failed',
      error:
        'parse_failed: not a valid DOCX file: the ZIP archive is truncated or damaged (its end-of-central-directory record is missing); upload the complete file again',
      chunk_count: null,
    });
    expect((await settled(api, encrypted.body.id)).error).toMatch(/^parse_failed: the XLSX file is password-protected \(encrypted\)/);
    expect(await settled(api, after.body.id)).toMatchObject({ status: 'processed', error: null });
    const hits = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'tachyon' } });
    expect(hits.status).toBe(200);
    expect(hits.body.results[0].text).toBe('Footnotes\n- A tachyon walks into a bar.\n- Fin.');
  });
});
