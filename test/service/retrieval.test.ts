import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, credits, eventually, startHarness, upload, type Api, type Harness } from './helpers.js';

/**
 * A fake OpenAI-compatible embeddings provider on loopback: a text about cats (cat, feline, kitten)
 * points one way, about dogs (dog, canine, puppy) another, anything else a third: a "model" that
 * knows synonyms no word overlap can find.
 */
type Provider = { url: string; inputs: string[]; auth: (string | undefined)[]; models: string[]; fail: boolean; close(): Promise<void> };

async function fakeProvider(): Promise<Provider> {
  const p: Provider = { url: '', inputs: [], auth: [], models: [], fail: false, close: async () => {} };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (p.fail) {
        res.writeHead(503).end('overloaded');
        return;
      }
      const body = JSON.parse(raw) as { model: string; input: string[] };
      p.inputs.push(...body.input);
      p.auth.push(req.headers.authorization);
      p.models.push(body.model);
      const vec = (t: string): number[] => {
        const s = t.toLowerCase();
        if (/\b(cat|cats|feline|kitten)\b/.test(s)) return [1, 0.05, 0];
        if (/\b(dog|dogs|canine|puppy)\b/.test(s)) return [0.05, 1, 0];
        return [0, 0, 1];
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: body.input.map((t, index) => ({ object: 'embedding', index, embedding: vec(t) })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  p.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return p;
}

async function uploadProcessed(api: Api, name: string, content: string): Promise<number> {
  const res = await upload(api, name, content);
  expect(res.status).toBe(201);
  const id = res.body.id as number;
  await eventually(async () => {
    const list = await api.call('GET', '/api/v1/ext/files/');
    const file = (list.body.files as { id: number; status: string; error?: string }[]).find((f) => f.id === id);
    if (file?.status === 'failed') throw new Error(`${name} failed: ${file.error}`);
    return file?.status === 'processed' ? true : undefined;
  });
  return id;
}

const query = (api: Api, q: string, extra: Record<string, unknown> = {}) =>
  api.call('POST', '/api/v1/ext/datasets/query', { json: { query: q, top_k: 5, ...extra } });

let h: Harness;
let provider: Provider;

beforeAll(async () => {
  h = await startHarness();
  provider = await fakeProvider();
});

afterAll(async () => {
  await h.close();
  await provider.close();
});

afterEach(() => {
  provider.fail = false;
});

describe('query: hybrid ranking', () => {
  it('scores every hit in [0, 1], best first; an inflected question finds its file; stopwords alone find nothing', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 100 });
    const proxy = await uploadProcessed(
      api,
      'proxy.md',
      '# Proxies\n\nConfigure the proxy agent for outgoing connections behind a corporate firewall.',
    );
    await uploadProcessed(api, 'harbour.md', '# Harbour\n\nThe harbour master schedules the tugboats every morning.');

    const exact = await query(api, 'proxy agent');
    const misspelt = await query(api, 'Where do I configure proxies for connecting out?');
    const nothing = await query(api, 'the of and');

    expect(exact.body.results[0].knowledge_source_id).toBe(proxy);
    expect(misspelt.body.results[0]?.knowledge_source_id).toBe(proxy);
    for (const r of [...exact.body.results, ...misspelt.body.results]) expect(r.score >= 0 && r.score <= 1).toBe(true);
    const scores = exact.body.results.map((r: { score: number }) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(nothing.body.results).toEqual([]);
  });
});

describe('query: where each result came from (origin, a local-service extension)', () => {
  it('answers the heading path of a Markdown chunk, the rows of a CSV chunk, and the same in batch results', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 100 });
    const guide = await uploadProcessed(
      api,
      'lighthouse-guide.md',
      '# Lighthouses\n\n## Keepers\n\nA lighthouse keeper trims the lamp wick at dusk.',
    );
    const table = await uploadProcessed(api, 'lamps.csv', 'lamp,fuel\nargand,whale oil\nfresnel,paraffin\n');

    const md = await query(api, 'lighthouse keeper wick');
    const csv = await query(api, 'fresnel paraffin');
    const batch = await api.call('POST', '/api/v1/ext/datasets/query/batch', { json: { queries: ['lighthouse keeper wick'], top_k: 1 } });

    expect(md.body.results[0]).toMatchObject({
      knowledge_source_id: guide,
      origin: { heading: 'Lighthouses > Keepers', first_row: null, last_row: null },
    });
    expect(csv.body.results[0]).toMatchObject({ knowledge_source_id: table, origin: { heading: null, first_row: 1, last_row: 2 } });
    expect(Object.keys(csv.body.results[0]).sort()).toEqual(['chunk_index', 'knowledge_source_id', 'origin', 'score', 'text']);
    expect(batch.body.results[0].results[0].origin).toEqual({ heading: 'Lighthouses > Keepers', first_row: null, last_row: null });
  });
});

describe('embeddings provider and reindex', () => {
  it('after a restart with a provider, reindex embeds every chunk with it and a synonym finds what no word matches', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 100 });
    const cats = await uploadProcessed(api, 'cats.md', 'Kitten care\n\nA young kitten sleeps most of the day and purrs when content.');
    await uploadProcessed(api, 'dogs.md', 'Puppy training\n\nA puppy learns to sit and fetch with short daily lessons.');
    const before = await query(api, 'feline');
    expect(before.body.results).toEqual([]);

    await h.restart({ embeddings: { url: provider.url, model: 'fake-1', apiKey: 'sk-embed-secret' } });
    const balance = await credits(api);
    const reindex = await api.call('POST', '/api/v1/ext/datasets/reindex', { json: {} });
    const embeddedByReindex = [...provider.inputs];
    const after = await query(api, 'feline');

    expect(reindex.status).toBe(200);
    expect(reindex.body).toMatchObject({ status: 'done', chunks: 2 });
    expect(await credits(api)).toBe(balance - 2 - 1);
    expect(embeddedByReindex.filter((t) => t.includes('kitten') || t.includes('puppy'))).toHaveLength(2);
    expect(provider.inputs).toContain('feline');
    expect(provider.auth.every((a) => a === 'Bearer sk-embed-secret')).toBe(true);
    expect(provider.models.every((m) => m === 'fake-1')).toBe(true);
    expect(after.body.results[0]).toMatchObject({ knowledge_source_id: cats });
    expect(after.body.results[0].score).toBeGreaterThan(0);
  });

  it('a provider failure answers 502 and costs nothing', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 100 });
    await h.restart({ embeddings: { url: provider.url, model: 'fake-1' } });
    await uploadProcessed(api, 'notes.md', 'Some notes about lighthouses.');
    const balance = await credits(api);
    provider.fail = true;

    const res = await query(api, 'lighthouse');
    const reindex = await api.call('POST', '/api/v1/ext/datasets/reindex', { json: {} });

    expect(res.status).toBe(502);
    expect(res.body.error.message).toContain('embeddings provider answered HTTP 503');
    expect(res.body.error.message).not.toContain('127.0.0.1');
    expect(reindex.status).toBe(502);
    expect(await credits(api)).toBe(balance);
  });
});

describe('chat', () => {
  it('the extractive answer quotes the best passage and cites its file by name', async () => {
    await h.restart({});
    const api = apiFor(h, { plan: 'pro', credits: 100 });
    const id = await uploadProcessed(
      api,
      'returns.md',
      '# Returns\n\nItems can be returned within 30 days of delivery. Opened software cannot be returned.',
    );
    await uploadProcessed(api, 'shipping.md', '# Shipping\n\nParcels leave the warehouse every weekday.');
    const agent = await api.call('POST', '/api/v1/ext/agents', { json: { name: 'helper' } });

    const chat = await api.call('POST', `/api/v1/ext/agents/${agent.body.id}/chat`, {
      json: { message: 'How many days do I have to return an item?' },
    });

    expect(chat.status).toBe(200);
    expect(chat.body.response).toContain(`Items can be returned within 30 days of delivery. (source ${id} "returns.md", chunk 0)`);
    expect(chat.body.sources[0]).toMatchObject({ knowledge_source_id: id });
  });
});
