import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChunkInput } from '../../src/service/store/chunks.js';
import { createIngestPool, type IngestPool } from '../../src/service/ingest/ingest-pool.js';
import { until } from '../helpers/until.js';
import { apiFor, eventually, startHarness, upload } from './helpers.js';

// The pool ends workers that have been idle for idleExitMs, so a burst's threads and their memory
// do not stay; once the last one has ended it gives the freed memory back (onIdle), and the next
// file starts a worker again.

let dir: string;
let pool: IngestPool | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kbsync-ingest-pool-'));
});

afterEach(async () => {
  await pool?.close();
  pool = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function chunksOf(p: IngestPool, name: string, text: string): Promise<string[]> {
  const storedPath = join(dir, name);
  writeFileSync(storedPath, text);
  const texts: string[] = [];
  for await (const batch of p.fileBatches({ name, storedPath }))
    texts.push(...batch.map((c: ChunkInput) => (typeof c === 'string' ? c : c.text)));
  return texts;
}

describe('the ingest pool when idle', () => {
  it('ends idle workers after idleExitMs, gives memory back once, and parses a later file with a new worker', async () => {
    let idles = 0;
    const p = createIngestPool({ workers: 2, idleExitMs: 300, parsing: {}, batchSize: 256, batchChars: 128 * 1024, onIdle: () => idles++ });
    pool = p;
    const state = (): string => `${p.running} running, ${idles} idle calls`;
    expect(p.running).toBe(0);

    const both = Promise.all([chunksOf(p, 'a.txt', 'penguins keep their eggs warm'), chunksOf(p, 'b.md', '# Harbor\n\nlanterns at night')]);
    await new Promise((r) => setImmediate(r));
    expect(p.running).toBe(2);
    const burst = await both;
    expect(burst[0]).toEqual(['penguins keep their eggs warm']);
    expect(burst[1]?.join(' ')).toContain('lanterns at night');

    await until(
      () => `the pool idle: ${state()}`,
      () => p.running === 0 && idles === 1,
    );

    const later = chunksOf(p, 'c.txt', 'copper meadow signal');
    await new Promise((r) => setImmediate(r));
    expect(p.running).toBe(1);
    expect(await later).toEqual(['copper meadow signal']);
    await until(
      () => `the pool idle again: ${state()}`,
      () => p.running === 0 && idles === 2,
    );
  }, 60_000);

  it("the service gives SQLite's page cache back once a burst's last worker has ended", async () => {
    // SQLite keeps its page cache in malloc's main heap: after a burst of files, memory that no trim could return.
    const pragma = vi.spyOn(Database.prototype, 'pragma');
    const h = await startHarness({ ingest: { idleExitMs: 200 } });
    try {
      const api = apiFor(h, { plan: 'basic', credits: 100 });
      expect((await upload(api, 'a.md', '# Harbor\n\nlanterns at night\n')).status).toBe(201);
      await eventually(async () =>
        (await api.call('GET', '/api/v1/ext/files/')).body.files[0]?.status === 'processed' ? true : undefined,
      );
      const shrinks = () => pragma.mock.calls.filter(([sql]) => sql === 'shrink_memory').length;

      await eventually(async () => (shrinks() === 1 ? true : undefined));
    } finally {
      pragma.mockRestore();
      await h.close();
    }
  });
});
