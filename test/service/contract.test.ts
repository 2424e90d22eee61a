import { writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, isApiError, verifyWebhook, type KnowledgeClient } from '../../src/client/index.js';
import type { ErrorCode } from '../../src/shared/errors.js';
import type { Plan } from '../../src/shared/plans.js';
import { sha256Hex } from '../../src/shared/sha256.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually, startHarness, tempDir, type Harness } from './helpers.js';

// The contract suite: every endpoint driven over real HTTP through kbsync's own client.
let h: Harness;
let receiver: WebhookReceiver;
const files = tempDir('kbsync-contract-files-');
const clients: KnowledgeClient[] = [];

beforeAll(async () => {
  h = await startHarness({ allowInsecureWebhooks: true });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await h.close();
  await receiver.close();
  files.cleanup();
});

function clientFor(d: { plan?: Plan; credits?: number } = {}): { client: KnowledgeClient; datasetId: string } {
  const { datasetId, apiKey } = h.service.admin.createDataset({ name: 'contract', plan: d.plan ?? 'pro', credits: d.credits ?? 1000 });
  // Retries off: a refused call must surface at once.
  const client = createClient({ baseUrl: h.service.url, apiKey, datasetId, retry: { retries: 0 } });
  clients.push(client);
  return { client, datasetId };
}

function fileWith(name: string, content: string | Buffer): string {
  const path = join(files.path, name.replaceAll('/', '_'));
  writeFileSync(path, content);
  return path;
}

async function balance(client: KnowledgeClient): Promise<number> {
  return (await client.getDataset()).creditsRemaining ?? NaN;
}

async function codeOf(call: Promise<unknown>): Promise<ErrorCode | 'ok'> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    if (isApiError(err)) return err.code;
    throw err;
  }
}

describe('contract: all 22 endpoints through the client', () => {
  it('datasets, files, agents, intelligence, agent-datasets and webhooks round-trip', async () => {
    const { client, datasetId } = clientFor({ plan: 'pro', credits: 1000 });

    // datasets (4)
    const listed = await client.listDatasets();
    const updated = await client.updateDataset({ name: 'Handbook', description: 'team docs' });
    // files (3)
    const up = await client.uploadFile({
      path: fileWith('guide.md', '# Onboarding\n\nNew hires get a laptop on day one.\n'),
      name: 'handbook/guide.md',
    });
    const processed = await eventually(async () => (await client.listAllFiles()).find((f) => f.id === up.id && f.status === 'processed'));
    const reprocessed = await client.reprocessFile(up.id);
    const page = await client.listFiles({ limit: 10 });
    // agents (5)
    const agent = await client.createAgent({ name: 'Onboarder', config: { system_prompt: 'Answer briefly.' } });
    const got = await client.getAgent(agent.id);
    const agents = await client.listAgents();
    const configured = await client.updateAgentConfig(agent.id, { top_k: 3 });
    await eventually(async () => ((await client.listFiles()).files[0]?.status === 'processed' ? true : undefined));
    const chat = await client.chat(agent.id, 'What do new hires get on day one?');
    // agent-dataset management (4, with the dataset update above)
    const attachments = await client.listAgentDatasets(agent.id);
    const attached = await client.attachDataset(agent.id, { datasetId });
    const mode = await client.setDatasetMode(agent.id, datasetId, 'self_learning');
    // intelligence (3)
    const entry = await client.writeIntelligence({
      agentId: agent.id,
      content: 'Laptops are collected on the last day.',
      title: 'Offboarding',
    });
    const batch = await client.writeIntelligenceBatch({
      agentId: agent.id,
      entries: [{ content: 'Badges expire yearly.' }, { content: 'Laptops are collected on the last day.' }],
    });
    const entries = await client.listIntelligence();
    // queries (after the entries are indexed)
    await eventually(async () => ((await client.listIntelligence()).entries.every((e) => e.status === 'processed') ? true : undefined));
    const hits = await client.query({ query: 'laptop', topK: 5 });
    const batchHits = await client.queryBatch({ queries: ['laptop', 'badges'], topK: 2 });
    const reindexed = await client.reindex();
    // webhooks (3)
    const hook = await client.createWebhook({ url: receiver.url, events: ['intelligence.processed'] });
    const hooks = await client.listWebhooks();
    const tested = await client.testWebhook(hook.id);

    expect(listed).toEqual({
      total: 1,
      datasets: [expect.objectContaining({ id: datasetId, plan: 'pro', creditsRemaining: 1000, knowledgeSourceCount: 0 })],
    });
    expect(updated).toMatchObject({ id: datasetId, name: 'Handbook', description: 'team docs' });
    expect(up).toMatchObject({ name: 'handbook/guide.md', status: 'queued', creditsCharged: 5 });
    expect(processed).toMatchObject({ name: 'handbook/guide.md', status: 'processed', error: null });
    expect(reprocessed).toEqual({ id: up.id, status: 'queued', creditsCharged: 5 });
    expect(page.total).toBe(1);
    expect(got).toMatchObject({ id: agent.id, name: 'Onboarder', datasets: [{ id: datasetId, mode: 'read_only' }] });
    expect(agents.map((a) => a.id)).toEqual([agent.id]);
    expect(configured.config).toEqual({ top_k: 3 });
    expect(chat.sources[0]).toMatchObject({ knowledgeSourceId: up.id, text: expect.stringContaining('laptop') });
    expect(chat.response.length).toBeGreaterThan(0);
    expect(attachments).toEqual([{ id: datasetId, name: 'Handbook', mode: 'read_only' }]);
    expect(attached).toEqual({ id: datasetId, mode: 'read_only' });
    expect(mode).toEqual({ id: datasetId, mode: 'self_learning' });
    expect(entry).toMatchObject({ duplicate: false, creditsCharged: 1, sha256: sha256Hex('Laptops are collected on the last day.') });
    expect(batch).toMatchObject({ created: 1, duplicates: 1, creditsCharged: 1 });
    expect(batch.results[1]?.id).toBe(entry.id);
    expect(entries.total).toBe(2);
    expect(hits.map((r) => r.knowledgeSourceId)).toContain(entry.id);
    expect(batchHits.map((b) => b.query)).toEqual(['laptop', 'badges']);
    expect(reindexed.status).toBe('done');
    expect(reindexed.chunks).toBeGreaterThanOrEqual(3);
    expect(hook.secret).toMatch(/^whsec_/);
    expect(hooks).toEqual([{ id: hook.id, url: receiver.url, events: ['intelligence.processed'], createdAt: hook.createdAt }]);
    expect(tested).toEqual({ delivered: true, status: 200 });
    // 5+5 (uploads/reprocess) + 5+2+1 (agent) + 1+1 (intelligence) + 1+2+2 (query, batch, reindex)
    expect(await balance(client)).toBe(1000 - 25);
  });
});

describe('contract: error codes through the client', () => {
  it('each error code, and no charge for any of them', async () => {
    const { client: basic } = clientFor({ plan: 'basic', credits: 100 });
    const { client: poor } = clientFor({ plan: 'pro', credits: 1 });
    const { client: other } = clientFor({ plan: 'pro', credits: 100 });
    const agent = await basic.createAgent({ name: 'a' });
    const bad = createClient({ baseUrl: h.service.url, apiKey: 'kbs_wrong', retry: { retries: 0 } });
    clients.push(bad);

    const codes = {
      unauthorized: await codeOf(bad.listDatasets()),
      tier_batch: await codeOf(basic.queryBatch({ queries: ['x'] })),
      tier_reindex: await codeOf(basic.reindex()),
      tier_intelligence: await codeOf(basic.writeIntelligenceBatch({ agentId: agent.id, entries: [{ content: 'x' }] })),
      mode: await codeOf(basic.writeIntelligence({ agentId: agent.id, content: 'x' })),
      not_found: await codeOf(other.getAgent(agent.id)),
      credits: await codeOf(poor.createAgent({ name: 'x' })),
      top_k: await codeOf(basic.query({ query: 'x', topK: 21 })),
      unsupported: await codeOf(basic.uploadFile({ path: fileWith('x.exe', 'MZ'), name: 'x.exe' })),
      bad_webhook_url: await codeOf(basic.createWebhook({ url: 'ftp://example.com/hook' })),
    };

    expect(codes).toEqual({
      unauthorized: 'unauthorized',
      tier_batch: 'tier_required',
      tier_reindex: 'tier_required',
      tier_intelligence: 'tier_required',
      mode: 'mode_forbidden',
      not_found: 'not_found',
      credits: 'insufficient_credits',
      top_k: 'validation_failed',
      unsupported: 'unsupported_file_type',
      bad_webhook_url: 'validation_failed',
    });
    expect(await balance(basic)).toBe(95);
    expect(await balance(poor)).toBe(1);
    expect(await balance(other)).toBe(100);
  });

  it('413 file_too_large for an upload over the plan limit', async () => {
    const small = await startHarness({ maxFileBytes: { free: 1024 } });
    try {
      const { datasetId, apiKey } = small.service.admin.createDataset({ name: 'x', plan: 'free', credits: 100 });
      const client = createClient({ baseUrl: small.service.url, apiKey, datasetId, retry: { retries: 0 } });
      clients.push(client);

      const code = await codeOf(client.uploadFile({ path: fileWith('big.txt', Buffer.alloc(4096, 'a')), name: 'big.txt' }));

      expect(code).toBe('file_too_large');
      expect((await client.listFiles()).total).toBe(0);
    } finally {
      await small.close();
    }
  });
});

/** What a refused call carried: the client's code, the HTTP status and Retry-After (ms). */
async function refusal(call: Promise<unknown>): Promise<{ code: ErrorCode; status: number | null; retryAfterMs: number | null }> {
  try {
    await call;
  } catch (err) {
    if (isApiError(err)) return { code: err.code, status: err.status, retryAfterMs: err.retryAfterMs };
    throw err;
  }
  throw new Error('the call succeeded');
}

/** A real OpenAI-compatible chat-completions server on 127.0.0.1 that holds every answer until released. */
async function startHeldLlm(): Promise<{ url: string; waitForRequest(): Promise<void>; release(): void; close(): Promise<void> }> {
  const held: ServerResponse[] = [];
  let arrived: () => void = () => undefined;
  const first = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      held.push(res);
      arrived();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => {
    for (const res of held.splice(0)) {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ choices: [{ message: { content: 'held answer' } }] }));
    }
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    waitForRequest: () => first,
    release,
    close: () => {
      release();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('contract: limit, idempotency, rate and request errors through the client (code, status, Retry-After)', () => {
  it('409 limit_reached for an 11th webhook', async () => {
    const { client } = clientFor();
    for (let i = 0; i < 10; i++) await client.createWebhook({ url: `${receiver.url}?n=${i}` });

    const eleventh = await refusal(client.createWebhook({ url: `${receiver.url}?n=10` }));

    expect(eleventh).toEqual({ code: 'limit_reached', status: 409, retryAfterMs: null });
    expect(await client.listWebhooks()).toHaveLength(10);
  });

  it('409 idempotency_in_progress for the same Idempotency-Key while the first call still runs; charged once', async () => {
    const llm = await startHeldLlm();
    const slow = await startHarness({ llmUrl: llm.url });
    try {
      const { datasetId, apiKey } = slow.service.admin.createDataset({ name: 'x', plan: 'pro', credits: 100 });
      const client = createClient({ baseUrl: slow.service.url, apiKey, datasetId, retry: { retries: 0 } });
      clients.push(client);
      const agent = await client.createAgent({ name: 'slow' });

      const first = client.chat(agent.id, 'anything?', { idempotencyKey: 'chat-1' });
      await llm.waitForRequest();
      const concurrent = await client.chat(agent.id, 'anything?', { idempotencyKey: 'chat-1' }).catch((err: unknown) => err);
      llm.release();
      const answered = await first;

      // The service says 409 idempotency_in_progress; to the client that is no refusal: the first call runs on.
      expect(concurrent).toMatchObject({ code: 'unknown_outcome', status: 409, serverCode: 'idempotency_in_progress' });
      expect(answered.response).toBe('held answer');
      expect(await balance(client)).toBe(100 - 5 - 1);
    } finally {
      await slow.close();
      await llm.close();
    }
  });

  it('429 rate_limited with Retry-After in ms, and the refused call is not charged', async () => {
    const limited = await startHarness({ rateLimitPerMin: 2, clock: () => Date.UTC(2025, 0, 1) });
    try {
      const { datasetId, apiKey } = limited.service.admin.createDataset({ name: 'x', plan: 'pro', credits: 100 });
      const client = createClient({ baseUrl: limited.service.url, apiKey, datasetId, retry: { retries: 0 } });
      clients.push(client);
      await client.query({ query: 'one' });
      await client.query({ query: 'two' });

      const third = await refusal(client.query({ query: 'three' }));

      // 2 per minute: the next token comes 30 s later (the clock stands still).
      expect(third).toEqual({ code: 'rate_limited', status: 429, retryAfterMs: 30_000 });
      // (Reading the balance over HTTP would be rate limited too: adding one credit returns it.)
      expect(limited.service.admin.addCredits(datasetId, 1)).toBe(98 + 1);
    } finally {
      await limited.close();
    }
  });

  it.each([
    ['an empty query', (c: KnowledgeClient) => c.query({ query: '' })],
    ['an empty dataset name', (c: KnowledgeClient) => c.updateDataset({ name: '' })],
    ['an empty agent name', (c: KnowledgeClient) => c.createAgent({ name: '' })],
    ['top_k 0', (c: KnowledgeClient) => c.query({ query: 'x', topK: 0 })],
  ])('400 invalid_request for %s, not charged', async (_label, call) => {
    const { client } = clientFor({ credits: 100 });

    const refused = await refusal(call(client));

    expect(refused).toEqual({ code: 'invalid_request', status: 400, retryAfterMs: null });
    expect(await balance(client)).toBe(100);
  });
});

describe('contract: idempotency through the client', () => {
  it('the same Idempotency-Key returns the same upload, charged once; another body under it is refused', async () => {
    const { client } = clientFor({ credits: 100 });
    const path = fileWith('same.txt', 'same content');

    const first = await client.uploadFile({ path, name: 'same.txt' }, { idempotencyKey: 'upload-1' });
    const repeat = await client.uploadFile({ path, name: 'same.txt' }, { idempotencyKey: 'upload-1' });
    const mismatch = await codeOf(
      client.uploadFile({ path: fileWith('other.txt', 'other'), name: 'other.txt' }, { idempotencyKey: 'upload-1' }),
    );

    expect(repeat).toEqual(first);
    expect(mismatch).toBe('idempotency_mismatch');
    expect((await client.listFiles()).total).toBe(1);
    expect(await balance(client)).toBe(95);
  });
});

describe('contract: webhooks delivered, verified, retried', () => {
  it('an intelligence.processed delivery verifies with the secret; a failing receiver gets the same event again', async () => {
    const { client, datasetId } = clientFor();
    const agent = await client.createAgent({ name: 'w' });
    await client.setDatasetMode(agent.id, datasetId, 'self_learning');
    const hook = await client.createWebhook({ url: receiver.url, events: ['intelligence.processed'] });
    const before = receiver.received.length;
    receiver.reply(500);

    const entry = await client.writeIntelligence({ agentId: agent.id, content: 'retry me' });
    await receiver.waitFor(before + 2);
    const [failed, retried] = receiver.received.slice(before);

    expect(failed?.headers['webhook-id']).toBe(retried?.headers['webhook-id']);
    expect(JSON.parse(retried?.body ?? '{}')).toMatchObject({ type: 'intelligence.processed', data: { entry_id: Number(entry.id) } });
    expect(verifyWebhook({ headers: retried?.headers ?? {}, body: retried?.body ?? '', secret: hook.secret }).ok).toBe(true);
    expect(verifyWebhook({ headers: retried?.headers ?? {}, body: `${retried?.body ?? ''} `, secret: hook.secret }).ok).toBe(false);
  });
});

describe('contract: state after a restart', () => {
  it('the same client keeps working against the restarted server on the same data dir', async () => {
    const { datasetId, apiKey } = h.service.admin.createDataset({ name: 'durable', plan: 'pro', credits: 100 });
    const before = createClient({ baseUrl: h.service.url, apiKey, datasetId, retry: { retries: 0 } });
    clients.push(before);
    const up = await before.uploadFile({ path: fileWith('keep.txt', 'kept across restarts'), name: 'keep.txt' });
    const agent = await before.createAgent({ name: 'kept' });

    await h.restart({ allowInsecureWebhooks: true });
    const after = createClient({ baseUrl: h.service.url, apiKey, datasetId, retry: { retries: 0 } });
    clients.push(after);
    const processed = await eventually(async () => (await after.listAllFiles()).find((f) => f.id === up.id && f.status === 'processed'));

    expect(processed.sha256).toBe(up.sha256);
    expect((await after.getAgent(agent.id)).name).toBe('kept');
    expect(await balance(after)).toBe(90);
  });
});
