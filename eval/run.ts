/**
 * `npm run eval`: retrieval quality on two evaluation sets, each a corpus and its questions: the
 * project's own (eval/corpus, eval/questions.json; origins in eval/corpus/README.md) and a guard
 * against over-fitting to it (eval/fastify: another subject, its questions written before any
 * ranking was run on it). Every file is parsed and chunked by the service's own ingest code into an
 * in-memory store; each question is asked with top_k 20. Prints recall@5 (share of questions with a
 * chunk of an answering file among the first 5) and MRR (mean of 1 / rank of the first such chunk,
 * 0 past rank 20), for hybrid ranking and for BM25 alone, overall, for the literal and paraphrased
 * halves, and for the two halves of a fixed split (questions at even and odd positions).
 * Exits 1 when hybrid misses recall@5 ≥ 0.95 or MRR ≥ 0.9 on the main set. `--misses` lists the
 * questions hybrid ranking misses in its first 5; `--ranks` prints the rank of each question's first
 * answering chunk (`-` past 20), to compare two rankings question by question.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Sqlite from 'better-sqlite3';
import { chunkSectionsWithOrigin, type Chunk } from '../src/service/ingest/chunker.js';
import { parserFor } from '../src/service/ingest/registry.js';
import { hashedEmbedder } from '../src/service/search/embedder.js';
import { retrieve } from '../src/service/search/retrieve.js';
import { migrateChunks, replaceChunks, searchChunks, type ChunkHit } from '../src/service/store/chunks.js';
import { scoreRanking, type Ranked } from './metrics.js';

type Question = { q: string; files: string[]; paraphrased: boolean };
type Run = Ranked & { position: number };

const DEPTH = 20;
const root = fileURLToPath(new URL('../../eval/', import.meta.url));
const fmt = (n: number): string => n.toFixed(3);

/** Ingests one set's corpus, asks its questions, prints its table; returns hybrid ranking's overall scores. */
async function evaluate(label: string, corpusDir: string, questionsFile: string): Promise<{ recall: number; mrr: number }> {
  const questions = JSON.parse(readFileSync(questionsFile, 'utf8')) as Question[];
  const db = new Sqlite(':memory:');
  migrateChunks(db);
  const names = new Map<number, string>();
  let chunkCount = 0;
  for (const [i, name] of readdirSync(corpusDir)
    .filter((n) => n !== 'README.md')
    .sort()
    .entries()) {
    const parser = parserFor(name);
    if (parser === undefined) throw new Error(`${corpusDir}/${name}: no parser for this file type`);
    // As the service stores them: with their origin (heading path) and the file's name as title.
    const chunks: Chunk[] = [];
    for await (const chunk of chunkSectionsWithOrigin(parser.parse(join(corpusDir, name)))) chunks.push(chunk);
    replaceChunks(db, { datasetId: 1, sourceId: i + 1, title: name, chunks });
    names.set(i + 1, name);
    chunkCount += chunks.length;
  }
  const files = (hits: ChunkHit[]): string[] => hits.map((h) => names.get(h.knowledgeSourceId) ?? '?');

  const hybrid: Run[] = [];
  const bm25: Run[] = [];
  for (const [position, question] of questions.entries()) {
    const h = await retrieve(db, hashedEmbedder, { datasetId: 1, query: question.q, topK: DEPTH });
    const b = searchChunks(db, { datasetId: 1, query: question.q, topK: DEPTH });
    hybrid.push({ files: files(h), relevant: question.files, paraphrased: question.paraphrased, position });
    bm25.push({ files: files(b), relevant: question.files, paraphrased: question.paraphrased, position });
  }

  console.log(
    `\n${label}: ${names.size} files, ${chunkCount} chunks; ${questions.length} questions (${questions.filter((q) => q.paraphrased).length} paraphrased)`,
  );
  console.log('ranking       subset       recall@5  MRR');
  for (const [ranking, runs] of [
    ['hybrid', hybrid],
    ['bm25 only', bm25],
  ] as const) {
    for (const [subset, pick] of [
      ['all', () => true],
      ['literal', (r: Run) => !r.paraphrased],
      ['paraphrased', (r: Run) => r.paraphrased],
      ['tune', (r: Run) => r.position % 2 === 0],
      ['held-out', (r: Run) => r.position % 2 === 1],
    ] as const) {
      const s = scoreRanking(runs.filter(pick), 5);
      console.log(`${ranking.padEnd(13)} ${subset.padEnd(12)} ${fmt(s.recall).padStart(8)}  ${fmt(s.mrr)}`);
    }
  }
  if (process.argv.includes('--ranks')) {
    hybrid.forEach((r, i) => {
      const rank = r.files.findIndex((f) => r.relevant.includes(f));
      console.log(`rank ${rank < 0 ? '-' : rank + 1}: ${questions[i]?.q}`);
    });
  }
  if (process.argv.includes('--misses')) {
    hybrid.forEach((r, i) => {
      const rank = r.files.findIndex((f) => r.relevant.includes(f));
      if (rank < 0 || rank >= 5) console.log(`miss: ${questions[i]?.q} → ${r.files.slice(0, 5).join(', ')}`);
    });
  }
  db.close();
  return scoreRanking(hybrid, 5);
}

const main = await evaluate('main set (eval/corpus)', join(root, 'corpus'), join(root, 'questions.json'));
await evaluate('guard set (eval/fastify)', join(root, 'fastify', 'corpus'), join(root, 'fastify', 'questions.json'));
if (main.recall < 0.95 || main.mrr < 0.9) {
  console.log('\nFAIL: targets on the main set are recall@5 ≥ 0.95 and MRR ≥ 0.9');
  process.exitCode = 1;
}
