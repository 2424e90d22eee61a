import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/shared/logger.js';
import { beginChunkReplace, countChunks, replaceChunks, searchChunks } from '../../../src/service/store/chunks.js';
import { claimNextFile } from '../../../src/service/store/processing.js';
import { parserFor } from '../../../src/service/ingest/registry.js';
import { addEntry, addFile, createTestDb, fileRow, type TestDb } from './test-support.js';
import type { Parser, Section } from '../../../src/service/ingest/types.js';
import type { ChunkSource } from '../../../src/service/ingest/chunk-source.js';
import { processEntry } from '../../../src/service/ingest/process-entry.js';
import type { PendingEntry } from '../../../src/service/store/processing.js';
import {
  createProcessingWorker,
  type IntelligenceEventEntry,
  type ProcessingWorker,
  type ProcessingWorkerOptions,
} from '../../../src/service/ingest/worker.js';

let t: TestDb;
let worker: ProcessingWorker | undefined;
let events: [string, IntelligenceEventEntry][];

beforeEach(() => {
  t = createTestDb();
  events = [];
});

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  vi.useRealTimers();
  t.cleanup();
});

function startWorker(extra: Partial<ProcessingWorkerOptions> = {}): ProcessingWorker {
  worker = createProcessingWorker({
    db: t.db,
    logger: silentLogger(),
    onIntelligenceEvent: (kind, entry) => events.push([kind, entry]),
    ...extra,
  });
  worker.start();
  return worker;
}

async function runQueue(extra: Partial<ProcessingWorkerOptions> = {}): Promise<void> {
  const w = startWorker(extra);
  w.kick();
  await w.whenIdle();
}

/** A parser that yields one section, then waits for `release()` before yielding the rest. */
function gatedParser(): { parser: Parser; firstYielded: Promise<void>; release(): void } {
  let release!: () => void;
  let firstYielded!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const first = new Promise<void>((r) => (firstYielded = r));
  const parser: Parser = {
    extensions: ['gate'],
    async *parse(): AsyncGenerator<Section> {
      yield { text: 'first part about penguins' };
      firstYielded();
      await gate;
      for (let i = 0; i < 5; i++) yield { text: `later part ${i} about penguins` };
    },
  };
  return { parser, firstYielded: first, release };
}

describe('files', () => {
  it('moves a queued file to processed with its chunk count, and makes it searchable', async () => {
    const id = addFile(t, { name: 'Notes.MD', content: '# Tides\nThe spring tide comes at noon.\n' });

    await runQueue();

    expect(fileRow(t.db, id)).toEqual({ status: 'processed', error: null, chunk_count: 1, attempts: 1 });
    expect(searchChunks(t.db, { datasetId: 1, query: 'spring tide', topK: 5 })).toEqual([
      {
        text: 'Tides\nThe spring tide comes at noon.',
        score: expect.any(Number),
        knowledgeSourceId: id,
        chunkIndex: 0,
        origin: { heading: 'Tides', firstRow: null, lastRow: null },
      },
    ]);
  });

  it.each([
    [
      'bad.csv',
      'a,b\n1,2\n3,"open\n',
      'parse_failed: invalid CSV: line 3: a quoted field is never closed (the file ends inside it); fix the file and upload it again',
    ],
    ['bad.jsonl', '{"a":1}\n{"a":\n', 'parse_failed: line 2: invalid JSON: unexpected end of JSON; fix the line and upload the file again'],
    [
      'report.docx',
      'PK',
      'parse_failed: not a valid DOCX file: the ZIP archive is truncated or damaged (its end-of-central-directory record is missing); upload the complete file again',
    ],
    ['Makefile', 'all:', 'unsupported_type: no parser for files without an extension'],
    [
      'bin.txt',
      Buffer.from([0, 1, 2]),
      'parse_failed: not a text file: NUL character at offset 0 (binary data, or UTF-16 without a byte order mark); upload text saved as UTF-8 (or UTF-16 with a byte order mark)',
    ],
  ])('fails %s with a clear error', async (name, content, error) => {
    const id = addFile(t, { name, content });

    await runQueue();

    expect(fileRow(t.db, id)).toMatchObject({ status: 'failed', error, chunk_count: null });
    expect(countChunks(t.db, 1)).toBe(0);
  });

  it('fails a file whose stored copy is gone, without naming the server path', async () => {
    const id = addFile(t, { name: 'gone.txt', content: 'x' });
    t.db.prepare('UPDATE files SET stored_path = ? WHERE id = ?').run(`${t.dir}/no-such-blob`, id);

    await runQueue();

    expect(fileRow(t.db, id)).toMatchObject({
      status: 'failed',
      error: 'file_missing: the stored copy of the file is missing; upload it again',
    });
  });

  it('processes an empty file with zero chunks', async () => {
    const id = addFile(t, { name: 'empty.json', content: '' });

    await runQueue();

    expect(fileRow(t.db, id)).toEqual({ status: 'processed', error: null, chunk_count: 0, attempts: 1 });
  });

  it('replaces the chunks of a reprocessed file and clears its old error', async () => {
    const id = addFile(t, { name: 'a.txt', content: 'first version about otters' });
    await runQueue();
    await worker?.stop();
    t.db.prepare(`UPDATE files SET status = 'queued', error = 'old' WHERE id = ?`).run(id);

    await runQueue();

    expect(fileRow(t.db, id)).toEqual({ status: 'processed', error: null, chunk_count: 1, attempts: 2 });
    expect(searchChunks(t.db, { datasetId: 1, query: 'otters', topK: 5 })).toHaveLength(1);
    expect(t.db.prepare('SELECT COUNT(*) AS n FROM chunks').get()).toEqual({ n: 1 });
  });

  it('writes a large file in batches and indexes all of it', async () => {
    const rows = Array.from({ length: 2000 }, (_, i) => `${i},item ${i},${i % 7 === 0 ? 'seven' : 'other'}`).join('\n');
    const id = addFile(t, { name: 'big.csv', content: `id,name,tag\n${rows}\n` });

    await runQueue({ batchSize: 4 });

    const row = fileRow(t.db, id);
    expect(row.status).toBe('processed');
    expect(row.chunk_count).toBeGreaterThan(20);
    expect(countChunks(t.db, 1)).toBe(row.chunk_count);
    expect(searchChunks(t.db, { datasetId: 1, query: '1999', topK: 1 })[0]?.text).toContain('id: 1999; name: item 1999; tag: other');
  });
});

describe('restart and stop', () => {
  it('re-queues a file left in processing by a crash and finishes it on start', async () => {
    const id = addFile(t, { name: 'a.txt', content: 'crash survivor about puffins', status: 'processing' });
    beginChunkReplace(t.db, { datasetId: 1, sourceId: id }).add(['half-written puffins']);
    t.reopen();

    await runQueue();

    expect(fileRow(t.db, id)).toMatchObject({ status: 'processed', chunk_count: 1 });
    expect(searchChunks(t.db, { datasetId: 1, query: 'puffins', topK: 5 }).map((h) => h.text)).toEqual(['crash survivor about puffins']);
    expect(t.db.prepare('SELECT text FROM chunks').all()).toEqual([{ text: 'crash survivor about puffins' }]);
  });

  it('on stop puts the current file back in the queue, keeping its old chunks and no staged ones', async () => {
    const gated = gatedParser();
    const id = addFile(t, { name: 'a.gate', content: 'x' });
    replaceChunks(t.db, { datasetId: 1, sourceId: id, chunks: ['old penguins'] });
    const w = startWorker({ batchSize: 1, parserFor: () => gated.parser });
    w.kick();
    await gated.firstYielded;

    const stopped = w.stop();
    gated.release();
    await stopped;

    expect(fileRow(t.db, id)).toMatchObject({ status: 'queued', chunk_count: null });
    expect(searchChunks(t.db, { datasetId: 1, query: 'penguins', topK: 10 }).map((h) => h.text)).toEqual(['old penguins']);
    expect(t.db.prepare(`SELECT state FROM chunk_generations ORDER BY id`).all()).toEqual([{ state: 'live' }, { state: 'garbage' }]);
  });

  it('keeps the old chunks searchable while a file is reprocessed', async () => {
    const gated = gatedParser();
    const id = addFile(t, { name: 'a.gate', content: 'x' });
    replaceChunks(t.db, { datasetId: 1, sourceId: id, chunks: ['old penguins'] });
    const w = startWorker({ batchSize: 1, parserFor: () => gated.parser });
    w.kick();
    await gated.firstYielded;

    const during = searchChunks(t.db, { datasetId: 1, query: 'penguins', topK: 10 }).map((h) => h.text);
    const statusDuring = fileRow(t.db, id).status;
    gated.release();
    await w.whenIdle();

    expect(during).toEqual(['old penguins']);
    expect(statusDuring).toBe('processing');
    expect(fileRow(t.db, id)).toMatchObject({ status: 'processed', chunk_count: 6 });
  });

  it('processes a file again when it was re-queued while being processed', async () => {
    const gated = gatedParser();
    const id = addFile(t, { name: 'a.gate', content: 'x' });
    const w = startWorker({ parserFor: () => gated.parser });
    w.kick();
    await gated.firstYielded;

    t.db.prepare(`UPDATE files SET status = 'queued' WHERE id = ?`).run(id);
    w.kick();
    gated.release();
    await w.whenIdle();

    expect(fileRow(t.db, id)).toMatchObject({ status: 'processed', attempts: 2, chunk_count: 6 });
  });

  it('claims each queued file once', () => {
    const a = addFile(t, { name: 'a.txt', content: 'a' });
    const b = addFile(t, { name: 'b.txt', content: 'b' });

    const claims = [claimNextFile(t.db, 'now')?.id, claimNextFile(t.db, 'now')?.id, claimNextFile(t.db, 'now')];

    expect(claims).toEqual([a, b, undefined]);
  });
});

describe('waking', () => {
  it('wakes at once on kick', async () => {
    const w = startWorker({ idlePollMs: 3_600_000 });
    await w.whenIdle();
    const id = addFile(t, { name: 'a.txt', content: 'kicked' });

    w.kick();
    await w.whenIdle();

    expect(fileRow(t.db, id).status).toBe('processed');
  });

  it('finds work nobody kicked for at the idle poll', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const w = startWorker({ idlePollMs: 2000 });
    await w.whenIdle();
    const id = addFile(t, { name: 'a.txt', content: 'unkicked' });

    await vi.advanceTimersByTimeAsync(1999);
    const before = fileRow(t.db, id).status;
    await vi.advanceTimersByTimeAsync(1);
    await w.whenIdle();

    expect(before).toBe('queued');
    expect(fileRow(t.db, id).status).toBe('processed');
  });

  it('idle, looks twice as late after each empty look, up to 32 times the idle poll; a kick still wakes it at once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const w = startWorker({ idlePollMs: 2000 });
    await w.whenIdle();
    // Empty looks at 2 s, 6 s, 14 s, 30 s, 62 s, 126 s; the next at 190 s (64 s apart from then on).
    await vi.advanceTimersByTimeAsync(126_000);
    const unkicked = addFile(t, { name: 'a.txt', content: 'unkicked' });
    await vi.advanceTimersByTimeAsync(63_999);
    const before = fileRow(t.db, unkicked).status;
    await vi.advanceTimersByTimeAsync(1);
    await w.whenIdle();
    const kicked = addFile(t, { name: 'b.txt', content: 'kicked' });
    w.kick();
    await w.whenIdle();

    expect(before).toBe('queued');
    expect(fileRow(t.db, unkicked).status).toBe('processed');
    expect(fileRow(t.db, kicked).status).toBe('processed');
  });
});

describe('intelligence entries', () => {
  it('indexes a pending entry under its title and reports intelligence.processed', async () => {
    const id = addEntry(t, { title: 'Release 2.1', content: 'The new importer handles walrus data.', agentId: 7 });

    await runQueue();

    expect(t.db.prepare('SELECT status, error FROM intelligence WHERE id = ?').get(id)).toEqual({ status: 'processed', error: null });
    expect(searchChunks(t.db, { datasetId: 1, query: 'walrus importer', topK: 5 }).map((h) => [h.text, h.knowledgeSourceId])).toEqual([
      ['Release 2.1\nThe new importer handles walrus data.', id],
    ]);
    expect(events).toEqual([['intelligence.processed', { id, datasetId: 1, agentId: 7, sha256: `sha-${id}` }]]);
  });

  it('leaves an entry pending when its chunking is ended by the service stopping; fails it otherwise', async () => {
    const id = addEntry(t, { content: 'some text' });
    const entry = t.db
      .prepare('SELECT id, dataset_id AS datasetId, agent_id AS agentId, sha256, title, content FROM intelligence WHERE id = ?')
      .get(id) as PendingEntry;
    const ended: ChunkSource = {
      supports: () => true,
      fileBatches: () => (async function* () {})(),
      entryChunks: () => Promise.reject(new Error('the ingest worker ended without the entry chunks')),
      close: () => Promise.resolve(),
    };
    const ctx = {
      db: t.db,
      logger: silentLogger(),
      source: ended,
      now: () => new Date().toISOString(),
      onEvent: (k: string) => events.push([k, { id } as IntelligenceEventEntry]),
    };
    const status = (): unknown => t.db.prepare('SELECT status, error FROM intelligence WHERE id = ?').get(id);

    await processEntry({ ...ctx, isStopping: () => true }, entry);
    expect(status()).toEqual({ status: 'pending', error: null });
    expect(events).toEqual([]);

    await processEntry({ ...ctx, isStopping: () => false }, entry);
    expect(status()).toEqual({ status: 'failed', error: 'internal error while indexing the entry' });
  });

  it('fails an entry with no text and reports intelligence.failed with the reason', async () => {
    const id = addEntry(t, { content: ' \n\n ' });

    await runQueue();

    expect(t.db.prepare('SELECT status, error FROM intelligence WHERE id = ?').get(id)).toEqual({
      status: 'failed',
      error: 'the entry has no text to index',
    });
    expect(events).toEqual([
      ['intelligence.failed', { id, datasetId: 1, agentId: 7, sha256: `sha-${id}`, error: 'the entry has no text to index' }],
    ]);
  });

  it('keeps processing when the event handler throws', async () => {
    const a = addEntry(t, { content: 'first' });
    const b = addEntry(t, { content: 'second' });

    await runQueue({
      onIntelligenceEvent: () => {
        throw new Error('receiver down');
      },
    });

    const statuses = t.db.prepare('SELECT id, status FROM intelligence ORDER BY id').all();
    expect(statuses).toEqual([
      { id: a, status: 'processed' },
      { id: b, status: 'processed' },
    ]);
  });

  it('handles entries before files', async () => {
    const fileId = addFile(t, { name: 'a.txt', content: 'file' });
    const entryId = addEntry(t, { content: 'entry' });
    const order: number[] = [];

    await runQueue({ onIntelligenceEvent: (_kind, entry) => order.push(entry.id, fileRow(t.db, fileId).attempts) });

    expect(order).toEqual([entryId, 0]);
    expect(parserFor('a.txt')).toBeDefined();
  });
});
