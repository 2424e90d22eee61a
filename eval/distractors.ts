/**
 * `npm run eval:distractors`: does a small file still win for its own words when the dataset also
 * holds large files of other text? Each evaluation set (eval/corpus, eval/fastify) is indexed with
 * two large generated JSONL files of grade-school math word problems (the shape of GSM8K: short
 * problems in plain words, some of them "win" or "details") and a small note whose text says
 * "details for the win"; the set's questions and the note's phrase are then asked. Prints, for each
 * set, hybrid ranking's recall@5 and MRR without and with the large files, and the note's rank.
 * `--records N`: problems per large file (default 20,000, about 2,000 chunks each).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { chunkSectionsWithOrigin, type Chunk } from '../src/service/ingest/chunker.js';
import { parserFor } from '../src/service/ingest/registry.js';
import { hashedEmbedder } from '../src/service/search/embedder.js';
import { retrieve } from '../src/service/search/retrieve.js';
import { migrateChunks, replaceChunks } from '../src/service/store/chunks.js';
import { scoreRanking, type Ranked } from './metrics.js';

type Question = { q: string; files: string[]; paraphrased: boolean };

const root = fileURLToPath(new URL('../../eval/', import.meta.url));
const recordsArg = process.argv.indexOf('--records');
const RECORDS = recordsArg > 0 ? Number(process.argv[recordsArg + 1]) : 20_000;
const NOTE = 'offsite-notes.md';
const PROBE = 'details for the win';

/** mulberry32: the same files on every run. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4_294_967_296) * n);
  };
}

const NAMES = ['Natalia', 'Weng', 'Betty', 'Julie', 'James', 'Albert', 'Ken', 'Alexis', 'Tina', 'Randy', 'Joy', 'Mark', 'Janet', 'Carla'];
const ITEMS = ['clips', 'apples', 'marbles', 'stickers', 'books', 'cupcakes', 'tickets', 'pencils', 'shells', 'cards'];
const TEMPLATES = [
  (n: string, i: string, a: number, _b: number) =>
    `${n} sold ${a} ${i} to her friends in April, and then she sold half as many ${i} in May. How many ${i} did ${n} sell altogether in April and May?`,
  (n: string, i: string, a: number, b: number) =>
    `${n} earns $${a} an hour for babysitting. Yesterday, she just did ${b} minutes of babysitting. How much did she earn?`,
  (n: string, i: string, a: number, b: number) =>
    `${n}'s team needs to win ${a} of its ${a + b} games to reach the final. They win ${b} games in the first month. How many more games must they win?`,
  (n: string, i: string, a: number, b: number) =>
    `The details of ${n}'s order show ${a} boxes of ${i} with ${b} ${i} in each box. How many ${i} are in the order?`,
  (n: string, i: string, a: number, b: number) =>
    `${n} is saving money for a new wallet which costs $${a * 10}. She has only half of the money she needs. Her parents give her $${b}. How much more money does she need?`,
  (n: string, i: string, a: number, b: number) =>
    `In a raffle, ${n} can win ${a} ${i} for every ticket. The details say each ticket costs $${b}. How many ${i} does ${n} win with $${a * b}?`,
  (n: string, i: string, a: number, _b: number) =>
    `${n} is reading a ${a * 12}-page book. Yesterday, she was able to read ${a} pages and today, she read twice as many pages as yesterday. How many pages are left?`,
  (n: string, i: string, a: number, b: number) =>
    `A bakery packs ${a} ${i} into each tray and bakes ${b} trays every morning. How many ${i} does the bakery make in a week?`,
];

/** A JSONL file of `records` word problems, each with an answer that works it out. */
function wordProblems(records: number, seed: number): string {
  const pick = prng(seed);
  const lines: string[] = [];
  for (let k = 0; k < records; k++) {
    const name = NAMES[pick(NAMES.length)] as string;
    const item = ITEMS[pick(ITEMS.length)] as string;
    const a = 2 + pick(40);
    const b = 2 + pick(30);
    // As in GSM8K, "win" and "details" are in a few problems in a hundred, not in most.
    const roll = pick(100);
    const t = roll < 2 ? 2 : roll < 3 ? 3 : roll < 4 ? 5 : [0, 1, 4, 6, 7][pick(5)];
    const template = TEMPLATES[t as number] as (typeof TEMPLATES)[number];
    const answer = `${name} works it out step by step: ${a} + ${b} = ${a + b} and ${a} * ${b} = ${a * b}. #### ${a * b}`;
    lines.push(JSON.stringify({ question: template(name, item, a, b), answer }));
  }
  return `${lines.join('\n')}\n`;
}

const NOTE_TEXT = `# Offsite planning

The venue is booked for the second week of June; travel is by train.

## Agenda

Morning: the roadmap review. Afternoon: the customer panel, then the details for the win: each team
brings one change it will ship by the end of the quarter.
`;

async function ingest(db: Database, sourceId: number, name: string, path: string): Promise<number> {
  const parser = parserFor(name);
  if (parser === undefined) throw new Error(`${name}: no parser`);
  const chunks: Chunk[] = [];
  for await (const chunk of chunkSectionsWithOrigin(parser.parse(path))) chunks.push(chunk);
  replaceChunks(db, { datasetId: 1, sourceId, title: name, chunks });
  return chunks.length;
}

async function evaluate(label: string, corpusDir: string, questionsFile: string, extra: string[]): Promise<void> {
  const questions = JSON.parse(readFileSync(questionsFile, 'utf8')) as Question[];
  const db = new Sqlite(':memory:');
  migrateChunks(db);
  const names = new Map<number, string>();
  const files = readdirSync(corpusDir)
    .filter((n) => n !== 'README.md')
    .sort()
    .map((n) => join(corpusDir, n));
  let chunks = 0;
  for (const [i, path] of [...files, ...extra].entries()) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    chunks += await ingest(db, i + 1, name, path);
    names.set(i + 1, name);
  }
  const runs: Ranked[] = [];
  for (const question of questions) {
    const hits = await retrieve(db, hashedEmbedder, { datasetId: 1, query: question.q, topK: 20 });
    runs.push({
      files: hits.map((h) => names.get(h.knowledgeSourceId) ?? '?'),
      relevant: question.files,
      paraphrased: question.paraphrased,
    });
  }
  const s = scoreRanking(runs, 5);
  if (process.argv.includes('--misses'))
    runs.forEach((r, i) => {
      const rank = r.files.findIndex((f) => r.relevant.includes(f));
      if (rank < 0 || rank >= 5) console.log(`  miss: ${questions[i]?.q} → ${r.files.slice(0, 5).join(', ')}`);
    });
  const probe = await retrieve(db, hashedEmbedder, { datasetId: 1, query: PROBE, topK: 20 });
  const rank = probe.findIndex((h) => names.get(h.knowledgeSourceId) === NOTE);
  const top = probe.slice(0, 5).map((h) => `${names.get(h.knowledgeSourceId)}#${h.chunkIndex} ${h.score.toFixed(3)}`);
  console.log(
    `${label}: ${chunks} chunks; recall@5 ${s.recall.toFixed(3)}  MRR ${s.mrr.toFixed(3)}; "${PROBE}" finds ${NOTE} at ${rank < 0 ? '-' : rank + 1} (top: ${top.join(', ')})`,
  );
  db.close();
}

const dir = mkdtempSync(join(tmpdir(), 'kbsync-eval-'));
try {
  const large = [join(dir, 'gsm-train.jsonl'), join(dir, 'gsm-test.jsonl')];
  writeFileSync(large[0] as string, wordProblems(RECORDS, 1));
  writeFileSync(large[1] as string, wordProblems(RECORDS, 2));
  const note = join(dir, NOTE);
  writeFileSync(note, NOTE_TEXT);
  for (const [label, corpus, questions] of [
    ['main', join(root, 'corpus'), join(root, 'questions.json')],
    ['guard', join(root, 'fastify', 'corpus'), join(root, 'fastify', 'questions.json')],
  ] as const) {
    await evaluate(`${label}, the set alone + note`, corpus, questions, [note]);
    await evaluate(`${label} + 2 large files + note`, corpus, questions, [...large, note]);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
