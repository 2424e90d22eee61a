import { open } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../shared/logger.js';
import { addFile, createTestDb, fileRow, type TestDb } from '../ingest/test-support.js';
import type { Parser, Section } from '../ingest/types.js';
import { createProcessingWorker, type ProcessingWorker } from '../ingest/worker.js';

let t: TestDb;
let worker: ProcessingWorker | undefined;

beforeEach(() => {
  t = createTestDb();
});

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  vi.restoreAllMocks();
  t.cleanup();
});

/** The class of the handles fs/promises opens, to watch their datasync calls. */
async function fileHandlePrototype(): Promise<{ datasync(): Promise<void> }> {
  const handle = await open(t.path, 'r');
  await handle.close();
  return Object.getPrototypeOf(handle) as { datasync(): Promise<void> };
}

describe('the WAL of a large file', () => {
  it('is synced after each batch of staged chunks, before the next is written', async () => {
    const parser: Parser = {
      extensions: ['mem'],
      async *parse(): AsyncGenerator<Section> {
        for (let i = 0; i < 6; i++) yield { text: `section ${i} about storks` };
      },
    };
    const id = addFile(t, { name: 'a.mem', content: 'x' });
    // At each sync: how many of the file's chunks were written (staging) by then.
    const stagedAtSync: number[] = [];
    const staged = t.db.prepare(
      `SELECT COUNT(*) AS n FROM chunks c JOIN chunk_generations g ON g.id = c.generation WHERE g.source_id = ? AND g.state = 'staging'`,
    );
    const proto = await fileHandlePrototype();
    const datasync = proto.datasync;
    vi.spyOn(proto, 'datasync').mockImplementation(function (this: unknown) {
      stagedAtSync.push((staged.get(id) as { n: number }).n);
      return datasync.call(this);
    });

    worker = createProcessingWorker({
      db: t.db,
      logger: silentLogger(),
      onIntelligenceEvent: () => {},
      batchSize: 1,
      chunking: { maxChars: 32, overlapChars: 0 },
      parserFor: () => parser,
    });
    worker.start();
    worker.kick();
    await worker.whenIdle();

    expect(fileRow(t.db, id)).toMatchObject({ status: 'processed', chunk_count: 6 });
    expect(stagedAtSync).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
