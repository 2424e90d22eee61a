import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/sync/state/index.js';
import { realisticTracked, seededRandom } from './fixtures/realistic.js';
import { FAST_TMP, tempState } from './fixtures/state-dir.js';

/** The bound: at most 300 bytes of state per tracked file. Full figures at 100k: measure-state.ts. */
const MAX_BYTES_PER_FILE = 300;

function bytesPerFile(path: string, files: number): number {
  const db = new Database(path);
  db.exec('VACUUM');
  const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
  db.close();
  return bytes / files;
}

describe('state size and loading', () => {
  let t: ReturnType<typeof tempState>;
  let store: StateStore;
  beforeEach(() => {
    t = tempState(FAST_TMP);
    store = t.open();
  });
  afterEach(() => t.cleanup());

  it(`stores 20k realistic tracked files in at most ${MAX_BYTES_PER_FILE} bytes each`, () => {
    const rnd = seededRandom(11);
    store.upsertTrackedMany(Array.from({ length: 20_000 }, (_, i) => realisticTracked(i, rnd)));
    store.close();

    expect(bytesPerFile(t.path, 20_000)).toBeLessThanOrEqual(MAX_BYTES_PER_FILE);
  });

  it(`stays within ${MAX_BYTES_PER_FILE} bytes per file after a first sync through outbox and ledger`, () => {
    const rnd = seededRandom(12);
    const files = Array.from({ length: 5_000 }, (_, i) => realisticTracked(i, rnd));
    const run = store.startRun('sync');
    const ids = store.enqueueMany(files.map((f) => ({ kind: 'upload' as const, ...f, credits: 5, reason: 'new file' })));
    store.transaction(() => {
      ids.forEach((id, i) => {
        store.reserve(id, { run: 1e9, day: 1e9, month: 1e9 }, run);
        store.settle(id, { outcome: 'done', creditsCharged: 5, remoteId: String(100_000 + i), remoteStatus: 'processed' });
      });
    });
    store.finishRun(run, 'done', { uploaded: files.length });
    store.close();

    expect(bytesPerFile(t.path, files.length)).toBeLessThanOrEqual(MAX_BYTES_PER_FILE);
  });

  it('loads every tracked file back exactly as stored (its speed is measured by npm run bench)', () => {
    const rnd = seededRandom(13);
    const rows = Array.from({ length: 20_000 }, (_, i) => realisticTracked(i, rnd));
    store.upsertTrackedMany(rows);

    const loaded = store.loadTrackedFiles();

    expect(loaded.size).toBe(20_000);
    for (const row of [rows[0], rows[9_999], rows[19_999]]) {
      expect(loaded.get(`${row!.source}\0${row!.path}`)).toMatchObject({ size: row!.size, mtimeNs: row!.mtimeNs, sha256: row!.sha256 });
    }
  });
});
