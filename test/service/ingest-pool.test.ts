import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_HTML_DEPTH } from '../../src/service/ingest/html-sections.js';
import type { ServiceOptions } from '../../src/service/server.js';
import { apiFor, eventually, startHarness, upload, type Api, type Harness } from './helpers.js';

// Parsing runs in the ingest pool's worker threads, under a time and a memory limit per file: a
// heavy or hostile file neither holds the requests of other clients nor stops the files after it.

type FileRow = { id: number; status: string; error: string | null; chunk_count: number | null };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(extra: Partial<ServiceOptions> = {}): Promise<Api> {
  h = await startHarness(extra);
  return apiFor(h, { plan: 'pro', credits: 1000 });
}

async function fileRow(api: Api, id: number): Promise<FileRow> {
  const res = await api.call('GET', '/api/v1/ext/files/');
  return (res.body.files as FileRow[]).find((row) => row.id === id) as FileRow;
}

async function settled(api: Api, id: number, timeoutMs = 60_000): Promise<FileRow> {
  return eventually(async () => {
    const f = await fileRow(api, id);
    return f.status === 'processed' || f.status === 'failed' ? f : undefined;
  }, timeoutMs);
}

/** An XML file of `items` records (~64 bytes each): parsed whole, it holds a parser for a while and takes memory. */
function bigXml(items: number): string {
  const parts = ['<stock>'];
  for (let i = 0; i < items; i++) parts.push(`<item><id>${i}</id><name>widget number ${i}</name><count>${i % 97}</count></item>`);
  parts.push('</stock>');
  return parts.join('\n');
}

describe('the ingest pool', () => {
  it('answers requests while hostile and heavy files are parsed, and refuses HTML nested past the bound', async () => {
    const api = await start();
    // Queries go to another dataset, small: their own cost stays out of what is measured.
    const other = apiFor(h as Harness, { plan: 'pro', credits: 1000 });
    await settled(other, (await upload(other, 'notes.txt', 'widgets are counted every morning')).body.id);
    const unclosed = await upload(api, 'unclosed.html', `<p>intro</p>${'<div>'.repeat(200_000)}text`);
    const nested = await upload(api, 'nested.html', `${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}`);
    const heavy = await upload(api, 'stock.xml', bigXml(150_000));

    // Probe while the XML is being parsed (every request timed): before the pool, a request waited for the whole parse.
    const latencies: number[] = [];
    const timed = async <T>(request: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const answer = await request();
      latencies.push(performance.now() - t0);
      return answer;
    };
    while ((await timed(() => fileRow(api, heavy.body.id))).status !== 'processed' && latencies.length < 4000) {
      const res = await timed(() => other.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'widget', top_k: 1 } }));
      expect(res.status).toBe(200);
      await new Promise((r) => setTimeout(r, 20));
    }
    const refused = [await settled(api, unclosed.body.id), await settled(api, nested.body.id)];
    const processed = await settled(api, heavy.body.id);

    expect(latencies.length).toBeGreaterThanOrEqual(10);
    // A generous bound for a shared machine (writing the chunks takes the serving thread in turns): a parse
    // on the serving thread held requests for seconds.
    expect(Math.max(...latencies)).toBeLessThan(1000);
    expect(processed).toMatchObject({ status: 'processed', error: null });
    for (const f of refused) {
      expect(f.status).toBe('failed');
      expect(f.error).toMatch(new RegExp(`^parse_failed: elements are nested more than ${MAX_HTML_DEPTH} deep`));
    }
  }, 120_000);

  it('stops a parse past the time limit with parse_failed naming it, and the next file is processed', async () => {
    const api = await start({ ingest: { workers: 1, timeLimitMs: 200 } });
    const slow = await upload(api, 'stock.xml', bigXml(150_000));
    const next = await upload(api, 'notes.txt', 'penguins keep their eggs warm');

    const failed = await settled(api, slow.body.id);
    const after = await settled(api, next.body.id);

    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(
      'parse_failed: parsing stopped at the time limit of 0.2 s per file (kbsync serve --parse-time-limit); the file is too large or too complex to parse',
    );
    expect(after).toMatchObject({ status: 'processed', chunk_count: 1 });
  }, 120_000);

  it('stops a parse past the memory limit with parse_failed naming it, and the next file is processed', async () => {
    const api = await start({ ingest: { workers: 1, memoryLimitMb: 48 } });
    const hungry = await upload(api, 'stock.xml', bigXml(150_000));
    const next = await upload(api, 'notes.txt', 'penguins keep their eggs warm');

    const failed = await settled(api, hungry.body.id);
    const after = await settled(api, next.body.id);

    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(
      'parse_failed: parsing stopped at the memory limit of 48 MB per file (kbsync serve --parse-memory-limit); the file is too large or too complex to parse',
    );
    expect(after).toMatchObject({ status: 'processed', chunk_count: 1 });
  }, 120_000);
});
