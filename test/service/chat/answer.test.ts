import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { isKbsyncError } from '../../../src/shared/errors.js';
import { migrateChunks, replaceChunks } from '../../../src/service/store/chunks.js';
import { answerChat } from '../../../src/service/chat/answer.js';
import { NOTHING_FOUND } from '../../../src/service/chat/extractive.js';
import { completionsUrl } from '../../../src/service/chat/llm.js';

let db: Database;
let server: Server | undefined;

beforeEach(() => {
  db = new Sqlite(':memory:');
  migrateChunks(db);
  replaceChunks(db, {
    datasetId: 1,
    sourceId: 11,
    chunks: [
      'Returns\nOur refund policy: items can be returned within 30 days. Opened software cannot be returned.',
      'Shipping\nParcels leave the warehouse every weekday. Shipping is free for orders over 50 euros.',
    ],
  });
  replaceChunks(db, { datasetId: 1, sourceId: 12, chunks: ['id: 7; product: kettle; price: 25 euros'] });
});

afterEach(async () => {
  db.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

type Captured = {
  path?: string;
  headers?: IncomingMessage['headers'];
  body?: { model: string; messages: { role: string; content: string }[]; temperature?: number };
};

/** A tiny OpenAI-compatible server on 127.0.0.1:0 answering with `reply`. */
async function llmServer(reply: (res: ServerResponse) => void): Promise<{ url: string; captured: Captured }> {
  const captured: Captured = {};
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      captured.path = req.url;
      captured.headers = req.headers;
      captured.body = JSON.parse(raw) as Captured['body'];
      reply(res);
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server?.address() as AddressInfo).port}`, captured };
}

const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

async function llmFailure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isKbsyncError(err, 'llm_failed')).toBe(true);
  return (err as Error).message;
}

describe('answerChat without an LLM', () => {
  it('answers with the sentences that match the question, citing their sources', async () => {
    const answer = await answerChat({ db, datasetId: 1, message: 'What is the refund policy for returned items?', agentConfig: {} });

    expect(answer.response).toBe(
      'From the dataset:\n' +
        '- Our refund policy: items can be returned within 30 days. (source 11, chunk 0)\n' +
        '- Opened software cannot be returned. (source 11, chunk 0)',
    );
    expect(answer.sources.map((s) => [s.knowledgeSourceId, s.chunkIndex])).toEqual([[11, 0]]);
  });

  it('answers from a record line', async () => {
    const answer = await answerChat({ db, datasetId: 1, message: 'kettle price', agentConfig: {} });

    expect(answer.response).toBe('From the dataset:\n- id: 7; product: kettle; price: 25 euros (source 12, chunk 0)');
  });

  it.each(['Tell me about penguins', 'what is it?', ''])('says plainly that nothing matched %j', async (message) => {
    const answer = await answerChat({ db, datasetId: 1, message, agentConfig: {} });

    expect(answer).toEqual({ response: NOTHING_FOUND, sources: [] });
  });

  it('retrieves the agent’s top_k chunks (default 5), ignoring a top_k of the wrong type', async () => {
    const one = await answerChat({ db, datasetId: 1, message: 'euros', agentConfig: { top_k: 1 } });
    const fallback = await answerChat({ db, datasetId: 1, message: 'euros', agentConfig: { top_k: 'many' } });

    expect(one.sources).toHaveLength(1);
    expect(fallback.sources).toHaveLength(2);
  });
});

describe('answerChat with an OpenAI-compatible LLM', () => {
  it('sends system prompt, retrieved context and question, and returns the model’s answer', async () => {
    const llm = await llmServer(json(200, { choices: [{ message: { role: 'assistant', content: '  Within 30 days [1].  ' } }] }));

    const answer = await answerChat({
      db,
      datasetId: 1,
      message: 'refund policy?',
      agentConfig: { system_prompt: 'You are the shop assistant.', temperature: 0.2, model: 'tiny' },
      llmUrl: `${llm.url}/v1`,
      llmApiKey: 'sk-test',
    });

    expect(answer.response).toBe('Within 30 days [1].');
    expect(answer.sources.map((s) => s.knowledgeSourceId)).toEqual([11]);
    expect(llm.captured.path).toBe('/v1/chat/completions');
    expect(llm.captured.headers?.authorization).toBe('Bearer sk-test');
    expect(llm.captured.body?.model).toBe('tiny');
    expect(llm.captured.body?.temperature).toBe(0.2);
    const [system, user] = llm.captured.body?.messages ?? [];
    expect(system?.role).toBe('system');
    expect(system?.content.startsWith('You are the shop assistant.\n\nAnswer the question using only the numbered context passages')).toBe(
      true,
    );
    expect(user?.content).toBe(
      'Context:\n[1] (source 11, chunk 0)\nReturns\nOur refund policy: items can be returned within 30 days. Opened software cannot be returned.\n\nQuestion: refund policy?',
    );
  });

  it('tells the model when nothing matched', async () => {
    const llm = await llmServer(json(200, { choices: [{ message: { content: 'Nothing about that.' } }] }));

    const answer = await answerChat({ db, datasetId: 1, message: 'penguins', agentConfig: {}, llmUrl: llm.url });

    expect(answer).toEqual({ response: 'Nothing about that.', sources: [] });
    expect(llm.captured.body?.messages[1]?.content).toBe('Context:\n(no passages matched the question)\n\nQuestion: penguins');
    expect(llm.captured.body?.model).toBe('default');
  });

  it.each([
    ['an HTTP error', json(500, { error: 'model crashed' }), 'the language model answered HTTP 500: {"error":"model crashed"}'],
    ['a body that is not JSON', (res: ServerResponse) => res.end('<html>'), 'the language model answered with something that is not JSON'],
    ['no message content', json(200, { choices: [] }), 'the language model answered without a message'],
  ])('fails clearly on %s', async (_label, reply, message) => {
    const llm = await llmServer(reply);

    expect(await llmFailure(answerChat({ db, datasetId: 1, message: 'refund', agentConfig: {}, llmUrl: llm.url }))).toBe(message);
  });

  it('fails clearly when the model does not answer in time', async () => {
    const llm = await llmServer(() => undefined);

    const message = await llmFailure(
      answerChat({ db, datasetId: 1, message: 'refund', agentConfig: {}, llmUrl: llm.url, llmTimeoutMs: 150 }),
    );

    expect(message).toBe('the language model did not answer within 150 ms');
    server?.closeAllConnections();
  });

  it('fails clearly when nothing listens, without naming the URL or the key', async () => {
    const llm = await llmServer(() => undefined);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;

    const message = await llmFailure(
      answerChat({ db, datasetId: 1, message: 'refund', agentConfig: {}, llmUrl: llm.url, llmApiKey: 'sk-secret' }),
    );

    expect(message).toBe('could not reach the language model (ECONNREFUSED)');
  });
});

describe('completionsUrl', () => {
  it.each([
    ['http://h:1', 'http://h:1/v1/chat/completions'],
    ['http://h:1/', 'http://h:1/v1/chat/completions'],
    ['http://h:1/v1', 'http://h:1/v1/chat/completions'],
    ['http://h:1/openai/v1/chat/completions', 'http://h:1/openai/v1/chat/completions'],
  ])('%s → %s', (input, expected) => {
    expect(completionsUrl(input)).toBe(expected);
  });
});
