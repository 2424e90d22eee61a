/**
 * Query latency of the local service's hybrid retrieval (search/retrieve.ts: BM25 + the built-in
 * hashed vectors, brute force) at 10k and 100k chunks, one thread: a service database in a temp
 * folder, chunks of ~1,500 characters of Zipf-distributed synthetic words written as the ingest
 * worker writes them (vectors included), then timed queries of 2–6 content words (ranks past the
 * 100 most frequent, which stand for stopwords). BM25 alone on the same
 * queries is the reference. The first query after a write loads the vector table; it is timed apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { hashedEmbedder } from '../src/service/search/embedder.js';
import { searchHybrid } from '../src/service/search/hybrid.js';
import { prepareVectors, retrieve } from '../src/service/search/retrieve.js';
import { beginChunkReplace, searchChunks } from '../src/service/store/chunks.js';
import { openServiceDb } from '../src/service/store/db.js';
import { prng } from './scan-tree.js';

export type QueryBenchSize = {
  chunks: number;
  hybridP50Ms: number;
  hybridP95Ms: number;
  bm25P50Ms: number;
  bm25P95Ms: number;
  /** Every vector scanned (as with a provider's vectors): the brute-force cost. */
  scanP50Ms: number;
  scanP95Ms: number;
  firstQueryMs: number;
  vectorTableMb: number;
};
export type QueryBenchResult = { sizes: QueryBenchSize[]; queries: number };

const VOCABULARY = 20_000;

function makeWords(rand: () => number): string[] {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: VOCABULARY }, (_, i) => {
    const len = 3 + Math.floor(rand() * 8);
    let w = '';
    for (let k = 0; k < len; k++) w += letters[Math.floor(rand() * 26)];
    return `${w}${i % 7 === 0 ? 'ing' : ''}`;
  });
}

/** A Zipf-like pick: rank ∝ exp(u · ln N), so frequent words are frequent. */
const zipf = (rand: () => number, words: readonly string[]): string =>
  words[Math.floor(Math.exp(rand() * Math.log(words.length))) - 1] as string;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

const round = (n: number): number => Math.round(n * 100) / 100;

export async function runQueryBench(o: { sizes?: number[]; queries?: number; log?: (line: string) => void }): Promise<QueryBenchResult> {
  const sizes = o.sizes ?? [10_000, 100_000];
  const queries = o.queries ?? 200;
  const rand = prng(17);
  const words = makeWords(rand);
  const out: QueryBenchSize[] = [];
  for (const size of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-query-bench-'));
    const db = openServiceDb(join(dir, 'service.db'));
    try {
      db.prepare(`INSERT INTO datasets (id, name, plan, credits, created_at) VALUES (1, 'bench', 'pro', 0, '2026-01-01T00:00:00Z')`).run();
      const started = performance.now();
      for (let source = 0; source * 100 < size; source++) {
        db.prepare(`INSERT INTO knowledge_sources (id, dataset_id, kind) VALUES (?, 1, 'file')`).run(source + 1);
        const replace = beginChunkReplace(db, { datasetId: 1, sourceId: source + 1 });
        const batch: string[] = [];
        for (let c = 0; c < 100 && source * 100 + c < size; c++) {
          const parts: string[] = [];
          for (let len = 0; len < 1500;) {
            const w = zipf(rand, words);
            parts.push(w);
            len += w.length + 1;
          }
          batch.push(parts.join(' '));
        }
        replace.add(batch);
        replace.commit();
      }
      o.log?.(`${size} chunks written in ${Math.round((performance.now() - started) / 1000)} s`);
      // Query words are content words: the 100 most frequent play the part of stopwords (in real
      // text they are "the", "of"..., which queryTerms drops) and are not asked for.
      const contentWord = (): string => {
        for (;;) {
          const w = zipf(rand, words);
          if (words.indexOf(w) >= 100) return w;
        }
      };
      const qs = Array.from({ length: queries }, () => Array.from({ length: 2 + Math.floor(rand() * 5) }, contentWord).join(' '));
      const t0 = performance.now();
      await retrieve(db, hashedEmbedder, { datasetId: 1, query: 'warm up', topK: 5 });
      const firstQueryMs = performance.now() - t0;
      const hybrid: number[] = [];
      const bm25: number[] = [];
      const scan: number[] = [];
      for (const query of qs) {
        const a = performance.now();
        await retrieve(db, hashedEmbedder, { datasetId: 1, query, topK: 5 });
        const b = performance.now();
        searchChunks(db, { datasetId: 1, query, topK: 5 });
        const c = performance.now();
        const vectors = await prepareVectors(db, 1, hashedEmbedder, query);
        searchHybrid(db, {
          datasetId: 1,
          query,
          topK: 5,
          ...(vectors === undefined ? {} : { vectors: { ...vectors, lexicalFirst: false } }),
        });
        scan.push(performance.now() - c);
        bm25.push(c - b);
        hybrid.push(b - a);
      }
      hybrid.sort((x, y) => x - y);
      bm25.sort((x, y) => x - y);
      scan.sort((x, y) => x - y);
      out.push({
        chunks: size,
        hybridP50Ms: round(percentile(hybrid, 50)),
        hybridP95Ms: round(percentile(hybrid, 95)),
        bm25P50Ms: round(percentile(bm25, 50)),
        bm25P95Ms: round(percentile(bm25, 95)),
        scanP50Ms: round(percentile(scan, 50)),
        scanP95Ms: round(percentile(scan, 95)),
        firstQueryMs: round(firstQueryMs),
        vectorTableMb: round((size * 256) / 1_048_576),
      });
      o.log?.(JSON.stringify(out[out.length - 1]));
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { sizes: out, queries };
}
