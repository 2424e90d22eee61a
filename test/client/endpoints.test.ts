import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY, mockService } from '../../src/client/mock-service.test-util.js';
import type { ClientOptions, KnowledgeClient } from '../../src/client/types.js';

const dir = mkdtempSync(join(tmpdir(), 'kbsync-client-'));
const filePath = join(dir, 'guide.md');
writeFileSync(filePath, '# hello\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chunk = { text: 'alpha', score: 0.9, knowledge_source_id: 12, chunk_index: 0 };
const parsedChunk = { text: 'alpha', score: 0.9, knowledgeSourceId: '12', chunkIndex: 0 };
const agentWire = { id: 3, name: 'helper', config: { top_k: 4 }, created_at: '2024-01-01T00:00:00Z', extra: 'ignored' };
const agentParsed = { id: '3', name: 'helper', config: { top_k: 4 }, createdAt: '2024-01-01T00:00:00Z', datasets: null };
const datasetWire = { id: 7519, name: 'docs', description: 'd', plan: 'pro', credits_remaining: 90, knowledge_source_count: 2 };
const datasetParsed = { id: '7519', name: 'docs', description: 'd', plan: 'pro', creditsRemaining: 90, knowledgeSourceCount: 2 };

type Case = {
  name: string;
  invoke: (c: KnowledgeClient) => Promise<unknown>;
  method: string;
  api: 'v1' | 'v2';
  path: string;
  paid: boolean;
  body?: unknown;
  query?: Record<string, string>;
  status?: number;
  reply: unknown;
  expected: unknown;
};

const cases: Case[] = [
  {
    name: 'listDatasets',
    invoke: (c) => c.listDatasets(),
    method: 'GET',
    api: 'v1',
    path: '/datasets/',
    paid: false,
    reply: { datasets: [datasetWire], total: 1 },
    expected: { datasets: [datasetParsed], total: 1 },
  },
  {
    name: 'getDataset',
    invoke: (c) => c.getDataset(),
    method: 'GET',
    api: 'v1',
    path: '/datasets/',
    paid: false,
    reply: { datasets: [datasetWire], total: 1 },
    expected: datasetParsed,
  },
  {
    name: 'updateDataset',
    invoke: (c) => c.updateDataset({ name: 'n', description: 'x' }),
    method: 'PUT',
    api: 'v2',
    path: '/datasets',
    paid: false,
    body: { name: 'n', description: 'x' },
    reply: datasetWire,
    expected: datasetParsed,
  },
  {
    name: 'query',
    invoke: (c) => c.query({ query: 'q', topK: 3, scoreThreshold: 0.2 }),
    method: 'POST',
    api: 'v1',
    path: '/datasets/query',
    paid: true,
    body: { query: 'q', top_k: 3, score_threshold: 0.2 },
    reply: { results: [chunk] },
    expected: [parsedChunk],
  },
  {
    name: 'queryBatch',
    invoke: (c) => c.queryBatch({ queries: ['a', 'b'], topK: 2 }),
    method: 'POST',
    api: 'v1',
    path: '/datasets/query/batch',
    paid: true,
    body: { queries: ['a', 'b'], top_k: 2 },
    reply: {
      results: [
        { query: 'a', results: [chunk] },
        { query: 'b', results: [] },
      ],
    },
    expected: [
      { query: 'a', results: [parsedChunk] },
      { query: 'b', results: [] },
    ],
  },
  {
    name: 'reindex',
    invoke: (c) => c.reindex(),
    method: 'POST',
    api: 'v1',
    path: '/datasets/reindex',
    paid: true,
    body: {},
    reply: { status: 'done', chunks: 40 },
    expected: { status: 'done', chunks: 40 },
  },
  {
    name: 'listFiles',
    invoke: (c) => c.listFiles({ limit: 10, offset: 20 }),
    method: 'GET',
    api: 'v1',
    path: '/files/',
    paid: false,
    query: { limit: '10', offset: '20' },
    reply: {
      files: [{ id: 5, name: 'a.md', size: 3, sha256: 'ab', status: 'processed', chunk_count: 1, created_at: 't1', updated_at: 't2' }],
      total: 21,
    },
    expected: {
      files: [
        { id: '5', name: 'a.md', size: 3, sha256: 'ab', status: 'processed', chunkCount: 1, error: null, createdAt: 't1', updatedAt: 't2' },
      ],
      total: 21,
    },
  },
  {
    name: 'uploadFile',
    invoke: (c) => c.uploadFile({ path: filePath, name: 'guide.md' }),
    method: 'POST',
    api: 'v1',
    path: '/files/upload',
    paid: true,
    body: '<stream>',
    status: 201,
    reply: { id: 9, name: 'guide.md', size: 8, sha256: 'ff', status: 'queued', credits_charged: 5 },
    expected: { id: '9', name: 'guide.md', size: 8, sha256: 'ff', status: 'queued', creditsCharged: 5 },
  },
  {
    name: 'reprocessFile',
    invoke: (c) => c.reprocessFile('9'),
    method: 'POST',
    api: 'v1',
    path: '/files/9/reprocess',
    paid: true,
    body: {},
    status: 202,
    reply: { id: 9, status: 'queued', credits_charged: 5 },
    expected: { id: '9', status: 'queued', creditsCharged: 5 },
  },
  {
    name: 'listAgents',
    invoke: (c) => c.listAgents(),
    method: 'GET',
    api: 'v1',
    path: '/agents/',
    paid: false,
    reply: { agents: [agentWire] },
    expected: [agentParsed],
  },
  {
    name: 'createAgent',
    invoke: (c) => c.createAgent({ name: 'helper', config: { top_k: 4 } }),
    method: 'POST',
    api: 'v1',
    path: '/agents/',
    paid: true,
    body: { name: 'helper', config: { top_k: 4 } },
    status: 201,
    reply: agentWire,
    expected: agentParsed,
  },
  {
    name: 'getAgent',
    invoke: (c) => c.getAgent('3'),
    method: 'GET',
    api: 'v1',
    path: '/agents/3',
    paid: false,
    reply: { ...agentWire, datasets: [{ id: 7519, mode: 'read_only' }] },
    expected: { ...agentParsed, datasets: [{ id: '7519', mode: 'read_only' }] },
  },
  {
    name: 'updateAgentConfig',
    invoke: (c) => c.updateAgentConfig('3', { temperature: 0.1 }),
    method: 'PUT',
    api: 'v1',
    path: '/agents/3/config',
    paid: true,
    body: { config: { temperature: 0.1 } },
    reply: agentWire,
    expected: agentParsed,
  },
  {
    name: 'chat',
    invoke: (c) => c.chat('3', 'hi?'),
    method: 'POST',
    api: 'v1',
    path: '/agents/3/chat',
    paid: true,
    body: { message: 'hi?' },
    reply: { response: 'hello', sources: [chunk] },
    expected: { response: 'hello', sources: [parsedChunk] },
  },
  {
    name: 'writeIntelligence',
    invoke: (c) => c.writeIntelligence({ agentId: '3', content: 'fact', title: 't', metadata: { k: 1 } }),
    method: 'POST',
    api: 'v2',
    path: '/datasets/intelligence',
    paid: true,
    body: { agent_id: 3, content: 'fact', title: 't', metadata: { k: 1 } },
    status: 201,
    reply: { id: 13, sha256: 'aa', status: 'pending', duplicate: false, credits_charged: 1 },
    expected: { id: '13', sha256: 'aa', status: 'pending', duplicate: false, creditsCharged: 1 },
  },
  {
    name: 'writeIntelligenceBatch',
    invoke: (c) => c.writeIntelligenceBatch({ agentId: 'agt_x', entries: [{ content: 'a' }, { content: 'b', title: 'B' }] }),
    method: 'POST',
    api: 'v2',
    path: '/datasets/intelligence/batch',
    paid: true,
    body: { agent_id: 'agt_x', entries: [{ content: 'a' }, { content: 'b', title: 'B' }] },
    reply: {
      results: [
        { id: 14, sha256: 'a', status: 'pending', duplicate: false, credits_charged: 1 },
        { id: 13, sha256: 'b', status: 'processed', duplicate: true, credits_charged: 0 },
      ],
      created: 1,
      duplicates: 1,
      credits_charged: 1,
    },
    expected: {
      results: [
        { id: '14', sha256: 'a', status: 'pending', duplicate: false, creditsCharged: 1 },
        { id: '13', sha256: 'b', status: 'processed', duplicate: true, creditsCharged: 0 },
      ],
      created: 1,
      duplicates: 1,
      creditsCharged: 1,
    },
  },
  {
    name: 'listIntelligence',
    invoke: (c) => c.listIntelligence({ limit: 5 }),
    method: 'GET',
    api: 'v2',
    path: '/datasets/intelligence',
    paid: false,
    query: { limit: '5' },
    reply: { entries: [{ id: 13, title: null, sha256: 'aa', status: 'processed', created_at: 't' }], total: 1 },
    expected: { entries: [{ id: '13', title: null, sha256: 'aa', status: 'processed', createdAt: 't' }], total: 1 },
  },
  {
    name: 'listAgentDatasets',
    invoke: (c) => c.listAgentDatasets('3'),
    method: 'GET',
    api: 'v2',
    path: '/agents/3/datasets',
    paid: false,
    reply: { datasets: [{ id: 7519, name: 'docs', mode: 'self_learning' }] },
    expected: [{ id: '7519', name: 'docs', mode: 'self_learning' }],
  },
  {
    name: 'attachDataset',
    invoke: (c) => c.attachDataset('3', { datasetId: '7519', mode: 'read_only' }),
    method: 'POST',
    api: 'v2',
    path: '/agents/3/datasets',
    paid: false,
    body: { dataset_id: 7519, mode: 'read_only' },
    status: 201,
    reply: { id: 7519, mode: 'read_only' },
    expected: { id: '7519', mode: 'read_only' },
  },
  {
    name: 'setDatasetMode',
    invoke: (c) => c.setDatasetMode('3', '7519', 'self_learning'),
    method: 'PATCH',
    api: 'v2',
    path: '/agents/3/datasets/7519',
    paid: false,
    body: { mode: 'self_learning' },
    reply: { id: 7519, mode: 'self_learning' },
    expected: { id: '7519', mode: 'self_learning' },
  },
  {
    name: 'createWebhook',
    invoke: (c) => c.createWebhook({ url: 'https://hook.test/x', events: ['dataset.mode_changed'] }),
    method: 'POST',
    api: 'v2',
    path: '/webhooks',
    paid: false,
    body: { url: 'https://hook.test/x', events: ['dataset.mode_changed'] },
    status: 201,
    reply: { id: 1, url: 'https://hook.test/x', events: ['dataset.mode_changed'], secret: 'whsec_abc', created_at: 't' },
    expected: { id: '1', url: 'https://hook.test/x', events: ['dataset.mode_changed'], secret: 'whsec_abc', createdAt: 't' },
  },
  {
    name: 'listWebhooks',
    invoke: (c) => c.listWebhooks(),
    method: 'GET',
    api: 'v2',
    path: '/webhooks',
    paid: false,
    reply: { webhooks: [{ id: 1, url: 'https://hook.test/x', events: [], created_at: 't' }] },
    expected: [{ id: '1', url: 'https://hook.test/x', events: [], createdAt: 't' }],
  },
  {
    name: 'testWebhook',
    invoke: (c) => c.testWebhook('1'),
    method: 'POST',
    api: 'v2',
    path: '/webhooks/1/test',
    paid: false,
    body: {},
    reply: { delivered: true, status: 200 },
    expected: { delivered: true, status: 200 },
  },
];

type DialectRun = {
  label: string;
  opts: Partial<ClientOptions>;
  v1: string;
  v2: string;
  authHeader: string;
  datasetQuery: Record<string, string>;
};

const runs: DialectRun[] = [
  { label: 'default dialect', opts: {}, v1: '/api/v1/ext', v2: '/api/v2/ext', authHeader: 'x-api-key', datasetQuery: {} },
  {
    label: 'hosted dialect with a dataset id',
    opts: {
      datasetId: '7519',
      dialect: { v1Prefix: '/api/platform/ext', v2Prefix: '/api/v2/ext/', authHeader: 'X-Custom-Key', uploadField: 'document' },
    },
    v1: '/api/platform/ext',
    v2: '/api/v2/ext',
    authHeader: 'x-custom-key',
    datasetQuery: { dataset_id: '7519' },
  },
];

describe.each(runs)('endpoints, $label', (run) => {
  it('covers all 22 endpoints of the spec', () => {
    const endpoints = new Set(cases.map((c) => `${c.method} ${c.api}${c.path}`));

    expect(endpoints.size).toBe(22);
  });

  it.each(cases)('$name sends the right request and parses the answer', async (c) => {
    const { client, seen, reply } = mockService(run.opts);
    reply({ status: c.status ?? 200, data: c.reply });

    const result = await c.invoke(client);

    expect(result).toEqual(c.expected);
    expect(seen).toHaveLength(1);
    const req = seen[0]!;
    expect(req.method).toBe(c.method);
    expect(req.path).toBe(`${c.api === 'v1' ? run.v1 : run.v2}${c.path}`);
    expect(req.query).toEqual({ ...c.query, ...run.datasetQuery });
    expect(req.headers[run.authHeader]).toBe(API_KEY);
    expect(req.headers.accept).toBe('application/json');
    expect(req.body).toEqual(c.body);
    if (c.paid) expect(req.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    else expect(req.headers['idempotency-key']).toBeUndefined();
  });
});

describe('request details', () => {
  it("sends the caller's Idempotency-Key on a paid call", async () => {
    const { client, seen, reply } = mockService();
    reply({ status: 200, data: { results: [] } });

    await client.query({ query: 'q' }, { idempotencyKey: 'outbox-17' });

    expect(seen[0]?.headers['idempotency-key']).toBe('outbox-17');
  });

  it('sends a fresh Idempotency-Key for each paid call', async () => {
    const { client, seen, reply } = mockService();
    reply({ status: 200, data: { status: 'done', chunks: 1 } });
    reply({ status: 200, data: { status: 'done', chunks: 1 } });

    await client.reindex();
    await client.reindex();

    expect(seen[0]?.headers['idempotency-key']).not.toBe(seen[1]?.headers['idempotency-key']);
  });

  it('streams an upload as multipart with an exact content-length', async () => {
    const { client, seen, reply } = mockService({ dialect: { uploadField: 'document' } });
    reply({ status: 201, data: { id: 1, name: 'guide.md', status: 'queued' } });

    await client.uploadFile({ path: filePath, name: 'guide.md' });

    const h = seen[0]!.headers;
    expect(h['content-type']).toMatch(/^multipart\/form-data; boundary=----kbsync[0-9a-f]{32}$/);
    const boundary = h['content-type']!.split('boundary=')[1]!;
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="document"; filename="guide.md"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    expect(Number(h['content-length'])).toBe(head.length + 8 + `\r\n--${boundary}--\r\n`.length);
  });

  it('encodes path ids', async () => {
    const { client, seen, reply } = mockService();
    reply({ status: 200, data: agentWire });

    await client.getAgent('a/b c');

    expect(seen[0]?.path).toBe('/api/v1/ext/agents/a%2Fb%20c');
  });

  it('getDataset picks the configured dataset id', async () => {
    const { client, reply } = mockService({ datasetId: '2' });
    reply({
      status: 200,
      data: {
        datasets: [
          { id: 1, name: 'one' },
          { id: 2, name: 'two' },
        ],
        total: 2,
      },
    });

    const d = await client.getDataset();

    expect(d.name).toBe('two');
  });

  it('getDataset fails with not_found when the key sees no dataset', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: { datasets: [], total: 0 } });

    await expect(client.getDataset()).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('lenient parsing', () => {
  it('reads `content` when `text` is absent and string ids as they are', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: { results: [{ content: 'beta', score: 0.5, knowledge_source_id: 'ks_1', chunk_index: 2, more: true }] } });

    const r = await client.query({ query: 'q' });

    expect(r).toEqual([{ text: 'beta', score: 0.5, knowledgeSourceId: 'ks_1', chunkIndex: 2 }]);
  });

  it("reads the local service's `origin` of a result, null parts kept, and leaves it out when absent", async () => {
    const { client, reply } = mockService();
    reply({
      status: 200,
      data: {
        results: [
          {
            text: 'a',
            score: 0.9,
            knowledge_source_id: 3,
            chunk_index: 1,
            origin: { heading: 'Install > Linux', first_row: null, last_row: null },
          },
          { text: 'b', score: 0.8, knowledge_source_id: 4, chunk_index: 0, origin: { heading: null, first_row: 2, last_row: 40 } },
          { text: 'c', score: 0.7, knowledge_source_id: 5, chunk_index: 0 },
        ],
      },
    });

    const r = await client.query({ query: 'q' });

    expect(r).toEqual([
      {
        text: 'a',
        score: 0.9,
        knowledgeSourceId: '3',
        chunkIndex: 1,
        origin: { heading: 'Install > Linux', firstRow: null, lastRow: null },
      },
      { text: 'b', score: 0.8, knowledgeSourceId: '4', chunkIndex: 0, origin: { heading: null, firstRow: 2, lastRow: 40 } },
      { text: 'c', score: 0.7, knowledgeSourceId: '5', chunkIndex: 0 },
    ]);
  });

  it('accepts a bare array for agent lists', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: [{ id: 'a1' }] });

    const r = await client.listAgents();

    expect(r).toEqual([{ id: 'a1', name: null, config: {}, createdAt: null, datasets: null }]);
  });

  it('fills absent optional file fields with null', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: { files: [{ id: 1, name: 'a.md', status: 'processed' }] } });

    const r = await client.listFiles();

    expect(r).toEqual({
      files: [
        {
          id: '1',
          name: 'a.md',
          size: null,
          sha256: null,
          status: 'processed',
          chunkCount: null,
          error: null,
          createdAt: null,
          updatedAt: null,
        },
      ],
      total: 1,
    });
  });
});

describe('listAllFiles', () => {
  const file = (id: number) => ({ id, name: `f${id}.md`, status: 'processed' });

  it('pages with limit/offset until total', async () => {
    const { client, seen, reply } = mockService();
    reply({ status: 200, data: { files: [file(1), file(2)], total: 3 } });
    reply({ status: 200, data: { files: [file(3)], total: 3 } });

    const all = await client.listAllFiles();

    expect(all.map((f) => f.id)).toEqual(['1', '2', '3']);
    expect(seen.map((s) => s.query)).toEqual([
      { limit: '1000', offset: '0' },
      { limit: '1000', offset: '2' },
    ]);
  });

  it('stops when a server ignoring offset repeats a page', async () => {
    const { client, seen, reply } = mockService();
    reply({ status: 200, data: { files: [file(1), file(2)], total: 5 } });
    reply({ status: 200, data: { files: [file(1), file(2)], total: 5 } });

    const all = await client.listAllFiles();

    expect(all.map((f) => f.id)).toEqual(['1', '2']);
    expect(seen).toHaveLength(2);
  });

  it('stops at an empty page when the server gives no total', async () => {
    const { client, seen, reply } = mockService();
    reply({ status: 200, data: { files: [file(1)] } });
    reply({ status: 200, data: { files: [] } });

    const all = await client.listAllFiles();

    expect(all.map((f) => f.id)).toEqual(['1']);
    expect(seen).toHaveLength(2);
  });
});

describe('filePages', () => {
  const file = (id: number) => ({ id, name: `f${id}.md`, status: 'processed' });

  it('yields each page as it comes, without the files the page before listed (a listing shifted by an upload)', async () => {
    const { client, seen, reply } = mockService();
    reply({ status: 200, data: { files: [file(1), file(2)], total: 4 } });
    reply({ status: 200, data: { files: [file(2), file(3)], total: 4 } });
    reply({ status: 200, data: { files: [file(4)], total: 4 } });

    const pages: string[][] = [];
    for await (const page of client.filePages()) pages.push(page.map((f) => f.id));

    expect(pages).toEqual([['1', '2'], ['3'], ['4']]);
    expect(seen.map((s) => s.query?.offset)).toEqual(['0', '2', '4']);
  });
});

describe('unknown file statuses', () => {
  it('are logged once each', async () => {
    const warnings: unknown[] = [];
    const logger = {
      warn: (obj: unknown, msg: string) => warnings.push([obj, msg]),
      debug: () => undefined,
    } as unknown as ClientOptions['logger'];
    const { client, reply } = mockService({ logger });
    const files = {
      files: [
        { id: 1, name: 'a', status: 'indexing' },
        { id: 2, name: 'b', status: 'indexing' },
        { id: 3, name: 'c', status: 'processed' },
      ],
      total: 3,
    };
    reply({ status: 200, data: files });
    reply({ status: 200, data: files });

    await client.listFiles();
    await client.listFiles();

    expect(warnings).toEqual([[{ status: 'indexing' }, 'unknown file status']]);
  });
});
