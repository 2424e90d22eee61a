import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/shared/logger.js';
import { countChunks } from '../../../src/service/store/chunks.js';
import { addFile, createTestDb, fileRow, type TestDb } from './test-support.js';
import type { Parser, Section } from '../../../src/service/ingest/types.js';
import { createProcessingWorker, type ProcessingWorker, type ProcessingWorkerOptions } from '../../../src/service/ingest/worker.js';

// The worker on inputs that once made it slow or block the event loop (speed itself is in bench/ingest.ts).

let t: TestDb;
let worker: ProcessingWorker | undefined;

beforeEach(() => {
  t = createTestDb();
});

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  t.cleanup();
});

async function runQueue(extra: Partial<ProcessingWorkerOptions> = {}): Promise<void> {
  worker = createProcessingWorker({ db: t.db, logger: silentLogger(), onIntelligenceEvent: () => {}, ...extra });
  worker.start();
  worker.kick();
  await worker.whenIdle();
}

describe('large and whitespace-heavy files', () => {
  it('processes a Markdown file of blank lines with zero chunks', async () => {
    const blank = ['\n', '\r\n', '   \n', '\t\n', ' \t \r\n'];
    const content = Array.from({ length: 400_000 }, (_, i) => blank[i % blank.length]).join('') + '\n'.repeat(1_000_000);
    const id = addFile(t, { name: 'blank.md', content });

    await runQueue();

    expect(fileRow(t.db, id)).toEqual({ status: 'processed', error: null, chunk_count: 0, attempts: 1 });
    expect(countChunks(t.db, 1)).toBe(0);
  });

  it('processes a large whitespace-only text file, with a very long blank line, with zero chunks', async () => {
    const content = `${' \t'.repeat(300_000)}\r\n${'    \n'.repeat(200_000)}${' '.repeat(2_000_000)}\r${'\u00a0\n'.repeat(50_000)}`;
    const id = addFile(t, { name: 'space.txt', content });

    await runQueue();

    expect(fileRow(t.db, id)).toEqual({ status: 'processed', error: null, chunk_count: 0, attempts: 1 });
  });

  it('indexes all of a large paragraph with no blank line, in order', async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `line ${i} of the long paragraph about marmots`);
    const id = addFile(t, { name: 'long.txt', content: `${lines.join('\n')}\n` });

    await runQueue();

    const row = fileRow(t.db, id);
    const texts = (t.db.prepare('SELECT text FROM chunks WHERE source_id = ? ORDER BY chunk_index').all(id) as { text: string }[]).map(
      (r) => r.text,
    );
    expect(row).toMatchObject({ status: 'processed', chunk_count: texts.length });
    expect(texts.join('\n')).toContain('line 29999 of the long paragraph about marmots');
    expect(texts[0]?.startsWith('line 0 of the long paragraph')).toBe(true);
  });

  it('lets other work run between the transactions of one file', async () => {
    const parser: Parser = {
      extensions: ['mem'],
      // Everything from memory: the only chances other work gets are the ones the worker gives.
      async *parse(): AsyncGenerator<Section> {
        for (let i = 0; i < 40; i++) yield { text: `paragraph ${i} about herons`, ...(i > 0 ? { continues: true } : {}) };
      },
    };
    const id = addFile(t, { name: 'a.mem', content: 'x' });
    const seen: number[] = [];
    let ticking = true;
    const tick = (): void => {
      // The last tick may run after the test ended: never touch the database once it may be closed.
      if (!ticking) return;
      seen.push((t.db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number }).n);
      setImmediate(tick);
    };
    setImmediate(tick);

    await runQueue({ batchSize: 1, chunking: { maxChars: 64, overlapChars: 0 }, parserFor: () => parser });
    ticking = false;

    const total = fileRow(t.db, id).chunk_count ?? 0;
    expect(total).toBeGreaterThan(5);
    expect(seen.filter((n) => n > 0 && n < total).length).toBeGreaterThan(total / 2);
  });
});
