import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PARSE_THREAD_NICE } from '../../../src/service/ingest/background-priority.js';
import { createIngestPool } from '../../../src/service/ingest/ingest-pool.js';

/** A thread's nice value, from its /proc stat line (field 19; the name in parentheses may hold spaces). */
function niceOf(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** The nice value of each thread of this process. */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').map((tid) => niceOf(`/proc/self/task/${tid}/stat`));
}

describe.runIf(process.platform === 'linux')('the ingest pool thread priority', () => {
  it('parses at a lower priority than the thread that answers requests, which keeps its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-nice-'));
    const path = join(dir, 'a.txt');
    writeFileSync(path, Array.from({ length: 200 }, (_, i) => `paragraph ${i} about herons and their nests\n\n`).join(''));
    const own = niceOf('/proc/thread-self/stat');
    const pool = createIngestPool({ workers: 1, parsing: {}, batchSize: 1, batchChars: 1 });
    let during: number[] = [];
    try {
      // The worker waits for the first batch to be written before it goes on: it is alive here.
      for await (const batch of pool.fileBatches({ name: 'a.txt', storedPath: path })) {
        expect(batch.length).toBeGreaterThan(0);
        during = threadNices();
        break;
      }
    } finally {
      await pool.close();
      rmSync(dir, { recursive: true, force: true });
    }

    expect(own).toBeLessThan(PARSE_THREAD_NICE);
    expect(during.filter((n) => n === PARSE_THREAD_NICE)).toHaveLength(1);
    expect(niceOf('/proc/thread-self/stat')).toBe(own);
  });
});
