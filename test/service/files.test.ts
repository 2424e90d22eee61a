import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/shared/sha256.js';
import { apiFor, credits, eventually, send, startHarness, upload, type Api, type Harness } from './helpers.js';

let h: Harness;

beforeAll(async () => {
  // A small limit for the free plan keeps the 413 tests fast; basic keeps docs/api.md's real 100 MB.
  h = await startHarness({ maxFileBytes: { free: 1_048_576 } });
});
afterAll(async () => {
  await h.close();
});

function storedFiles(): string[] {
  return readdirSync(join(h.dataDir, 'files')).filter((n) => n !== 'tmp');
}
/** Uploads still streaming: the files in the services' temp folders (`files/tmp/<instance>/`). */
function partialFiles(): string[] {
  const tmp = join(h.dataDir, 'files', 'tmp');
  return readdirSync(tmp).flatMap((instance) => readdirSync(join(tmp, instance)));
}

type Part = { name: string; value: string } | { name: string; filename: string; content: string };

/** Uploads a multipart body made by hand from `parts`, in order (plain fields and file parts alike). */
function postParts(api: Api, parts: Part[]) {
  const boundary = 'KBSYNCPARTS';
  const body = [
    ...parts.map((p) =>
      'filename' in p
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\n\r\n${p.content}\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`,
    ),
    `--${boundary}--\r\n`,
  ].join('');
  return api.call('POST', '/api/v1/ext/files/upload', { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
}

async function fileById(api: Api, id: number) {
  const res = await api.call('GET', '/api/v1/ext/files/');
  return (res.body.files as { id: number; status: string }[]).find((f) => f.id === id);
}

describe('upload', () => {
  it('answers 201 queued with size and sha256, and processing reaches processed', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });
    const content = '# Guide\n\nThe quick brown fox jumps over the lazy dog.\n';

    const res = await upload(api, 'docs/guide.md', content);
    const processed = await eventually(async () => {
      const f = await fileById(api, res.body.id);
      return f?.status === 'processed' ? f : undefined;
    });
    const hits = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'brown fox' } });

    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'docs/guide.md',
      size: Buffer.byteLength(content),
      sha256: sha256Hex(content),
      status: 'queued',
      credits_charged: 5,
    });
    expect(processed).toMatchObject({ name: 'docs/guide.md', status: 'processed', error: null, chunk_count: expect.any(Number) });
    expect(hits.body.results[0]).toMatchObject({
      knowledge_source_id: res.body.id,
      chunk_index: 0,
      text: expect.stringContaining('brown fox'),
    });
    expect(hits.body.results[0].score).toBeGreaterThan(0);
    expect(hits.body.results[0].score).toBeLessThanOrEqual(1);
  });

  it('moves a file it cannot parse to failed with an error, and reprocess re-queues it', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });

    const res = await upload(api, 'broken.json', '{"a": ');
    const failed = await eventually(async () => {
      const f = await fileById(api, res.body.id);
      return f?.status === 'failed' ? f : undefined;
    });
    const again = await api.call('POST', `/api/v1/ext/files/${res.body.id}/reprocess`);

    expect(failed).toMatchObject({ status: 'failed', error: expect.any(String) });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ id: res.body.id, status: 'queued', credits_charged: 5 });
    await eventually(async () => ((await fileById(api, res.body.id))?.status === 'failed' ? true : undefined));
  });

  it('lists files by id with limit, offset and total', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });
    const ids: number[] = [];
    for (const name of ['a.txt', 'b.txt', 'c.txt']) ids.push((await upload(api, name, `content of ${name}`)).body.id);

    const page1 = await api.call('GET', '/api/v1/ext/files/?limit=2');
    const page2 = await api.call('GET', '/api/v1/ext/files?limit=2&offset=2');
    const bad = await api.call('GET', '/api/v1/ext/files/?limit=20000');

    expect(page1.body.total).toBe(3);
    expect(page1.body.files.map((f: { id: number }) => f.id)).toEqual(ids.slice(0, 2));
    expect(page2.body.files.map((f: { id: number }) => f.id)).toEqual(ids.slice(2));
    expect(Object.keys(page1.body.files[0]).sort()).toEqual([
      'chunk_count',
      'created_at',
      'error',
      'id',
      'name',
      'sha256',
      'size',
      'status',
      'updated_at',
    ]);
    expect(bad.status).toBe(400);
  });

  it('415 for an unsupported extension, nothing charged or stored', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });
    const before = storedFiles().length;

    const res = await upload(api, 'tool.exe', 'MZ');

    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_file_type');
    expect(await credits(api)).toBe(100);
    expect(storedFiles().length).toBe(before);
  });

  it.each([
    ['no multipart at all', { 'content-type': 'application/json' }, '{}', 400],
    ['missing boundary', { 'content-type': 'multipart/form-data' }, 'garbage', 400],
    [
      'truncated body',
      { 'content-type': 'multipart/form-data; boundary=XX' },
      '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello',
      400,
    ],
    [
      'no file part',
      { 'content-type': 'multipart/form-data; boundary=XX' },
      '--XX\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi\r\n--XX--\r\n',
      400,
    ],
  ])('bad multipart (%s) answers JSON, nothing stored', async (_label, headers, body, status) => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });
    const before = storedFiles().length;

    const res = await api.call('POST', '/api/v1/ext/files/upload', { headers, body });

    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe('invalid_request');
    expect(await credits(api)).toBe(100);
    expect(storedFiles().length).toBe(before);
    expect(partialFiles()).toEqual([]);
  });

  it('a client that aborts mid-upload leaves no partial file and nothing recorded', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });
    const body = new PassThrough();
    const controller = new AbortController();
    const pending = request(`${h.service.url}/api/v1/ext/files/upload`, {
      method: 'POST',
      body,
      signal: controller.signal,
      headers: { 'x-api-key': api.key, 'content-type': 'multipart/form-data; boundary=AB' },
    }).catch((err: unknown) => err);
    body.write('--AB\r\nContent-Disposition: form-data; name="file"; filename="half.txt"\r\n\r\nhalf of it');
    await eventually(async () => (partialFiles().length > 0 ? true : undefined));

    controller.abort();
    await pending;

    await eventually(async () => (partialFiles().length === 0 ? true : undefined));
    expect((await api.call('GET', '/api/v1/ext/files/')).body.total).toBe(0);
    expect(await credits(api)).toBe(100);
  });

  it.each([
    ['two file parts named "file"', ['file', 'file']],
    ['a second file part under another name', ['file', 'attachment']],
  ])('%s: 400 "send exactly one file part", nothing stored or charged', async (_label, fields) => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });
    const before = storedFiles().length;
    const res = await postParts(
      api,
      fields.map((name, i) => ({ name, filename: `part${i}.txt`, content: `content ${i}` })),
    );

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'send exactly one file part' });
    expect(await credits(api)).toBe(100);
    expect((await api.call('GET', '/api/v1/ext/files/')).body.total).toBe(0);
    expect(storedFiles().length).toBe(before);
    expect(partialFiles()).toEqual([]);
  });

  it('ignores plain fields next to the one file part', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });
    const res = await postParts(api, [
      { name: 'note', value: 'before' },
      { name: 'file', filename: 'one.txt', content: 'the one file' },
      { name: 'tag', value: 'after' },
    ]);

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'one.txt', size: 12, credits_charged: 5 });
  });

  it('21 plain fields before the file: 400 naming the limit, nothing stored or charged', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });
    const res = await postParts(api, [
      ...Array.from({ length: 21 }, (_, i) => ({ name: `f${i}`, value: 'v' })),
      { name: 'file', filename: 'one.txt', content: 'the one file' },
    ]);

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'too many multipart fields' });
    expect(await credits(api)).toBe(100);
    expect((await api.call('GET', '/api/v1/ext/files/')).body.total).toBe(0);
    expect(partialFiles()).toEqual([]);
  });

  it('a multipart Content-Type without a boundary is a 400 that says so', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });

    const res = await api.call('POST', '/api/v1/ext/files/upload', { headers: { 'content-type': 'multipart/form-data' }, body: 'x' });

    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('malformed multipart Content-Type: it needs a boundary');
  });

  it('a file part under another field name is a 400', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 100 });

    const res = await upload(api, 'a.txt', 'x', { field: 'document' });

    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('file');
  });
});

describe('413 while streaming', () => {
  it('stops at the plan limit, deletes the partial file and charges nothing', async () => {
    const api = apiFor(h, { plan: 'free', credits: 100 });
    const before = storedFiles().length;
    const boundary = 'BOUNDARY413';
    let sent = 0;
    // 64 MiB offered against a 1 MiB limit: the answer must come long before the body ends.
    const body = Readable.from(
      (async function* () {
        yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n`);
        const chunk = Buffer.alloc(65_536, 'z');
        for (let i = 0; i < 1024; i++) {
          sent += chunk.length;
          yield chunk;
        }
        yield Buffer.from(`\r\n--${boundary}--\r\n`);
      })(),
    );

    const res = await request(`${h.service.url}/api/v1/ext/files/upload`, {
      method: 'POST',
      body,
      headers: { 'x-api-key': api.key, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    const answer = (await res.body.json()) as { error: { code: string } };

    expect(res.statusCode).toBe(413);
    expect(answer.error.code).toBe('file_too_large');
    expect(sent).toBeLessThan(64 * 1_048_576);
    expect(storedFiles().length).toBe(before);
    expect(partialFiles()).toEqual([]);
    expect(await credits(api)).toBe(100);
    expect((await api.call('GET', '/api/v1/ext/files/')).body.total).toBe(0);
  });

  it('accepts a file of exactly the limit', async () => {
    const api = apiFor(h, { plan: 'free', credits: 100 });

    const res = await upload(api, 'edge.txt', Buffer.alloc(1_048_576, 'e'));

    expect(res.status).toBe(201);
    expect(res.body.size).toBe(1_048_576);
  });

  it('basic plan refuses 100 MiB + 1 byte (the real limit) and stays up', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 1000 });
    const boundary = 'B100';
    const body = Readable.from(
      (async function* () {
        yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.txt"\r\n\r\n`);
        const chunk = Buffer.alloc(1_048_576, 'h');
        for (let i = 0; i < 100; i++) yield chunk;
        yield Buffer.from('h');
        yield Buffer.from(`\r\n--${boundary}--\r\n`);
      })(),
    );

    const res = await request(`${h.service.url}/api/v1/ext/files/upload`, {
      method: 'POST',
      body,
      headers: { 'x-api-key': api.key, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    const status = res.statusCode;
    await res.body.dump();
    const after = await send(`${h.service.url}/api/v1/ext/files/`, 'GET', { 'x-api-key': api.key });

    expect(status).toBe(413);
    expect(after.body.total).toBe(0);
    expect(partialFiles()).toEqual([]);
    expect(await credits(api)).toBe(1000);
  });
});
