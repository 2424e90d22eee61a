import { Busboy } from '@fastify/busboy';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { ApiError } from '../../src/client/errors.js';
import type { KnowledgeClient } from '../../src/client/types.js';

/** Uploads against a real HTTP server on 127.0.0.1 that parses the multipart body with busboy. */

type Received = {
  path: string;
  contentLength: number;
  bodyBytes: number;
  headers: IncomingMessage['headers'];
  parts: { field: string; fileName: string; sha256: string; bytes: number }[];
};

const KEY = 'kb_test_UploadKey_0123456789';
const dir = mkdtempSync(join(tmpdir(), 'kbsync-upload-'));
const content = randomBytes(700 * 1024 + 13); // several 256 KiB reads, odd length
const filePath = join(dir, 'payload.bin');
writeFileSync(filePath, content);

let server: Server;
let baseUrl: string;
let received: Received[] = [];
let answer: { status: number; body: unknown } = { status: 201, body: {} };
let onRequest: ((req: IncomingMessage) => boolean | void) | null = null;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (onRequest?.(req) === true) return; // the hook took the request over
    const entry: Received = {
      path: req.url ?? '',
      contentLength: Number(req.headers['content-length']),
      bodyBytes: 0,
      headers: req.headers,
      parts: [],
    };
    received.push(entry);
    req.on('data', (c: Buffer) => (entry.bodyBytes += c.length));
    const bb = Busboy({ headers: req.headers as { 'content-type': string }, preservePath: true });
    bb.on('file', (field, stream, fileName) => {
      const hash = createHash('sha256');
      let bytes = 0;
      stream.on('data', (c: Buffer) => (hash.update(c), (bytes += c.length)));
      stream.on('end', () => entry.parts.push({ field, fileName, sha256: hash.digest('hex'), bytes }));
    });
    bb.on('finish', () => {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    req.pipe(bb);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

let client: KnowledgeClient;
afterEach(async () => {
  await client?.close();
  received = [];
  onRequest = null;
});

const sha = createHash('sha256').update(content).digest('hex');

describe('uploadFile against a real multipart parser', () => {
  it.each([
    'plain.md',
    'with some spaces.md',
    'say "hi" to \'them\'.md',
    'ünïcödé 日本語 😀.md',
    'back\\slash.md',
    'docs/sub/guide.md',
    'semi;colon=equals.md',
  ])('delivers the name %j and every byte, with an exact content-length', async (name) => {
    client = createClient({ baseUrl, apiKey: KEY, datasetId: '42' });
    answer = { status: 201, body: { id: 77, name, size: content.length, sha256: sha, status: 'queued', credits_charged: 5 } };

    const result = await client.uploadFile({ path: filePath, name });

    expect(result).toEqual({ id: '77', name, size: content.length, sha256: sha, status: 'queued', creditsCharged: 5 });
    expect(received).toHaveLength(1);
    const r = received[0]!;
    expect(r.path).toBe('/api/v1/ext/files/upload?dataset_id=42');
    expect(r.parts).toEqual([{ field: 'file', fileName: name, sha256: sha, bytes: content.length }]);
    expect(r.contentLength).toBe(r.bodyBytes);
    expect(r.headers['transfer-encoding']).toBeUndefined();
    expect(r.headers['x-api-key']).toBe(KEY);
    expect(r.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends every byte of large files read through its reused buffers: three at once, to a server that reads slowly', async () => {
    // 12 MiB each: 48 reads of 256 KiB per file, each of the ring's buffers read into 12 times; the
    // server's pauses fill the socket buffers, so undici waits for 'drain' between chunks.
    const files = [0, 1, 2].map((i) => {
      const bytes = randomBytes(12 * 1024 * 1024 + 13 * (i + 1));
      const path = join(dir, `large-${i}.bin`);
      writeFileSync(path, bytes);
      return { path, name: `large-${i}.bin`, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    });
    onRequest = (req) => {
      let chunks = 0;
      req.on('data', () => {
        if (++chunks % 8 !== 0) return;
        req.pause();
        setTimeout(() => req.resume(), 5);
      });
    };
    client = createClient({ baseUrl, apiKey: KEY });
    answer = { status: 201, body: { id: 1, name: 'large.bin', status: 'queued' } };

    await Promise.all(files.map((f) => client.uploadFile({ path: f.path, name: f.name, size: f.size })));

    const parts = received.flatMap((r) => r.parts).sort((a, b) => a.fileName.localeCompare(b.fileName));
    expect(parts).toEqual(files.map((f) => ({ field: 'file', fileName: f.name, sha256: f.sha256, bytes: f.size })));
    for (const r of received) expect(r.contentLength).toBe(r.bodyBytes);
  });

  it("uses the dialect's field name and the caller's idempotency key", async () => {
    client = createClient({ baseUrl, apiKey: KEY, dialect: { uploadField: 'document', v1Prefix: '/api/platform/ext' } });
    answer = { status: 201, body: { id: 1, name: 'a.md', status: 'queued' } };

    await client.uploadFile({ path: filePath, name: 'a.md' }, { idempotencyKey: 'outbox-9' });

    expect(received[0]?.path).toBe('/api/platform/ext/files/upload');
    expect(received[0]?.parts[0]?.field).toBe('document');
    expect(received[0]?.headers['idempotency-key']).toBe('outbox-9');
  });

  it("surfaces the server's refusal as a typed error, without retrying", async () => {
    client = createClient({ baseUrl, apiKey: KEY, retry: { retries: 3, random: () => 0 } });
    answer = { status: 413, body: { error: { code: 'file_too_large', message: 'over 100 MB' } } };

    const err = await client.uploadFile({ path: filePath, name: 'a.md' }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'file_too_large', status: 413 });
    expect(received).toHaveLength(1);
  });

  it.each(['line\nbreak.md', 'carriage\rreturn.md'])('refuses the name %j before sending anything', async (name) => {
    client = createClient({ baseUrl, apiKey: KEY });

    await expect(client.uploadFile({ path: filePath, name })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(received).toHaveLength(0);
  });

  it('stops when the caller aborts', async () => {
    client = createClient({ baseUrl, apiKey: KEY });
    const ac = new AbortController();
    onRequest = () => {
      ac.abort();
    };

    const err = await client.uploadFile({ path: filePath, name: 'a.md' }, { signal: ac.signal }).catch((e: unknown) => e);

    expect(err).toMatchObject({ name: 'AbortError' });
  });

  it('with the hashed size, refuses a file of another size (file_changed) before sending anything', async () => {
    client = createClient({ baseUrl, apiKey: KEY });

    const err = await client.uploadFile({ path: filePath, name: 'a.md', size: content.length - 1 }).catch((e: unknown) => e);

    expect(err).toMatchObject({ code: 'file_changed' });
    expect((err as Error).message).toContain(filePath);
    expect(received).toHaveLength(0);
  });

  it('sends an empty file as an empty part', async () => {
    const empty = join(dir, 'empty.md');
    writeFileSync(empty, '');
    client = createClient({ baseUrl, apiKey: KEY });
    answer = { status: 201, body: { id: 5, name: 'empty.md', status: 'queued' } };

    await client.uploadFile({ path: empty, name: 'empty.md', size: 0 });

    expect(received[0]?.parts).toEqual([{ field: 'file', fileName: 'empty.md', sha256: createHash('sha256').digest('hex'), bytes: 0 }]);
    expect(received[0]?.contentLength).toBe(received[0]?.bodyBytes);
  });

  it('fails with the fs error (ENOENT) when the file is gone, sending nothing', async () => {
    client = createClient({ baseUrl, apiKey: KEY });

    await expect(client.uploadFile({ path: join(dir, 'missing.md'), name: 'missing.md' })).rejects.toMatchObject({ code: 'ENOENT' });
    expect(received).toHaveLength(0);
  });

  it('a connection dropped mid-upload is unknown_outcome (paid, never retried)', async () => {
    client = createClient({ baseUrl, apiKey: KEY, retry: { retries: 3, random: () => 0 } });
    let requests = 0;
    onRequest = (req) => {
      requests++;
      req.once('data', () => req.socket.destroy());
      return true;
    };

    const err = await client.uploadFile({ path: filePath, name: 'a.md' }).catch((e: unknown) => e);

    expect(err).toMatchObject({ code: 'unknown_outcome', status: null });
    expect(requests).toBe(1);
  });

  it('applies the headers timeout: a silent server fails a GET with timeout and a paid POST with unknown_outcome', async () => {
    client = createClient({ baseUrl, apiKey: KEY, timeouts: { headersMs: 150 }, retry: { retries: 0 } });
    onRequest = (req) => {
      req.resume();
      return true; // never answers
    };

    const [get, post] = await Promise.all([client.listFiles().catch((e: unknown) => e), client.reindex().catch((e: unknown) => e)]);

    expect(get).toMatchObject({ code: 'timeout' });
    expect(post).toMatchObject({ code: 'unknown_outcome' });
  });
});
