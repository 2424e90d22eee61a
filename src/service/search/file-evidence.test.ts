import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { migrateChunks, replaceChunks, searchChunks } from '../store/chunks.js';
import { hashedEmbedder } from './embedder.js';
import { LARGE_FILE_CHUNKS, rankWithFileEvidence, REPEAT_FACTOR } from './file-evidence.js';
import { retrieve } from './retrieve.js';

describe('rankWithFileEvidence', () => {
  it('lifts a chunk whose file has other matches above a lone chunk that scored a little higher', () => {
    const ranked = rankWithFileEvidence(
      [
        { id: 1, sourceId: 10, score: 0.6 },
        { id: 2, sourceId: 20, score: 0.55 },
        { id: 3, sourceId: 20, score: 0.4 },
        { id: 4, sourceId: 20, score: 0.3 },
      ],
      4,
    );

    expect(ranked[0]).toMatchObject({ id: 2, sourceId: 20 });
  });

  it("keeps a lone chunk's score, keeps every score in [0, 1], and returns them best first", () => {
    const ranked = rankWithFileEvidence(
      [
        { id: 1, sourceId: 1, score: 0.7 },
        { id: 2, sourceId: 2, score: 0.99 },
        { id: 3, sourceId: 2, score: 0.98 },
        { id: 4, sourceId: 2, score: 0.97 },
      ],
      10,
    );

    expect(ranked.find((c) => c.id === 1)?.score).toBe(0.7);
    for (const c of ranked) expect(c.score >= 0 && c.score <= 1).toBe(true);
    expect(ranked.map((c) => c.score)).toEqual([...ranked.map((c) => c.score)].sort((a, b) => b - a));
  });

  it("puts another file's close match before the same file's next chunk, but not a far weaker one", () => {
    const close = rankWithFileEvidence(
      [
        { id: 1, sourceId: 1, score: 0.8 },
        { id: 2, sourceId: 1, score: 0.8 },
        { id: 3, sourceId: 2, score: 0.8 * REPEAT_FACTOR + 0.1 },
      ],
      2,
    );
    const far = rankWithFileEvidence(
      [
        { id: 1, sourceId: 1, score: 0.8 },
        { id: 2, sourceId: 1, score: 0.8 },
        { id: 3, sourceId: 2, score: 0.1 },
      ],
      2,
    );

    expect(close.map((c) => c.id)).toEqual([1, 3]);
    expect(far.map((c) => c.id)).toEqual([1, 2]);
  });
});

describe('rankWithFileEvidence: large files', () => {
  const candidates = [
    { id: 1, sourceId: 1, score: 0.5 },
    { id: 2, sourceId: 2, score: 0.52 },
    { id: 3, sourceId: 2, score: 0.5 },
    { id: 4, sourceId: 2, score: 0.5 },
  ];

  it("puts a small file's lone match before a large file's several matches of the same strength", () => {
    const sizes = new Map([
      [1, 3],
      [2, 40 * LARGE_FILE_CHUNKS],
    ]);

    expect(rankWithFileEvidence(candidates, 4, (id) => sizes.get(id) ?? 1)[0]).toMatchObject({ id: 1 });
  });

  it('ranks files up to LARGE_FILE_CHUNKS chunks as before', () => {
    expect(rankWithFileEvidence(candidates, 4, () => LARGE_FILE_CHUNKS)).toEqual(rankWithFileEvidence(candidates, 4));
    expect(rankWithFileEvidence(candidates, 4)[0]).toMatchObject({ id: 2 });
  });
});

describe('hybrid retrieval with file evidence', () => {
  let db: Database;
  beforeEach(() => {
    db = new Sqlite(':memory:');
    migrateChunks(db);
  });
  afterEach(() => db.close());

  it('ranks first the file whose several sections match over a stray mention elsewhere', async () => {
    // A guide on rate limits (three sections), and a changelog line that mentions the words once, densely.
    replaceChunks(db, {
      datasetId: 1,
      sourceId: 1,
      chunks: [
        'Rate limits. Each API key may send a fixed number of requests per minute to the service.',
        'When the rate limit is exceeded the service answers 429 and says in Retry-After how long to wait.',
        'Raise your rate limit by asking support; the limit applies per key, not per user.',
      ],
    });
    replaceChunks(db, { datasetId: 1, sourceId: 2, chunks: ['Changelog: rate limit exceeded message reworded.'] });
    for (let i = 0; i < 12; i++)
      replaceChunks(db, { datasetId: 1, sourceId: 10 + i, chunks: [`Unrelated page ${i} about colours and fonts.`] });
    const question = 'What happens when I exceed the rate limit?';

    const bm25 = searchChunks(db, { datasetId: 1, query: question, topK: 5 });
    const hits = await retrieve(db, hashedEmbedder, { datasetId: 1, query: question, topK: 5 });

    expect(bm25[0]?.knowledgeSourceId).toBe(2);
    expect(hits[0]?.knowledgeSourceId).toBe(1);
  });

  it('lets another file into the first results instead of a fourth chunk of the same one', async () => {
    replaceChunks(db, {
      datasetId: 1,
      sourceId: 1,
      chunks: Array.from({ length: 6 }, (_, i) => `Webhooks part ${i}: a webhook delivery is signed; verify the webhook signature header.`),
    });
    replaceChunks(db, { datasetId: 1, sourceId: 2, chunks: ['Security: verify the signature of every webhook you receive.'] });
    for (let i = 0; i < 12; i++)
      replaceChunks(db, { datasetId: 1, sourceId: 10 + i, chunks: [`Unrelated page ${i} about colours and fonts.`] });
    const question = 'How do I verify a webhook signature?';

    const bm25 = searchChunks(db, { datasetId: 1, query: question, topK: 3 });
    const hits = await retrieve(db, hashedEmbedder, { datasetId: 1, query: question, topK: 3 });

    expect(bm25.map((h) => h.knowledgeSourceId)).toEqual([1, 1, 1]);
    expect(hits.map((h) => h.knowledgeSourceId)).toContain(2);
  });

  it("finds a small file's phrase of common words before the chunks of two large files that use the words too", async () => {
    // The shape of a GSM8K dump: thousands of short word problems, "win" and "details" in a few of them.
    const problems = (file: number): string[] =>
      Array.from({ length: 4 * LARGE_FILE_CHUNKS }, (_, i) =>
        [
          `Problem ${file}.${i}: a baker packs ${i} cupcakes into boxes of 6. How many boxes does the baker fill, and how many are left?`,
          i % 8 === 0
            ? `A team must win ${i % 40} of its games to reach the final; the details of the league give 3 points a game. How many points?`
            : `Natalia sold ${i % 50} clips to her friends in April and half as many in May. How many clips did she sell in all?`,
          `Weng earns $12 an hour for babysitting. Yesterday she did ${i % 60} minutes of babysitting. How much did she earn?`,
        ].join(' '),
      );
    replaceChunks(db, { datasetId: 1, sourceId: 1, title: 'gsm-train.jsonl', chunks: problems(1) });
    replaceChunks(db, { datasetId: 1, sourceId: 2, title: 'gsm-test.jsonl', chunks: problems(2) });
    replaceChunks(db, {
      datasetId: 1,
      sourceId: 3,
      title: 'offsite-notes.md',
      chunks: ['Agenda. Afternoon: the customer panel, then the details for the win: each team brings one change it will ship.'],
    });

    const hits = await retrieve(db, hashedEmbedder, { datasetId: 1, query: 'details for the win', topK: 5 });

    expect(hits[0]?.knowledgeSourceId).toBe(3);
  });

  it('gives the same first results whatever top_k is asked for (up to 25)', async () => {
    const words = ['cache', 'retry', 'proxy', 'timeout', 'cookie', 'header', 'stream', 'agent'];
    for (let f = 0; f < 30; f++)
      replaceChunks(db, {
        datasetId: 1,
        sourceId: f + 1,
        chunks: Array.from(
          { length: 3 },
          (_, c) => `Note ${f}.${c}: ${words.filter((_, w) => (f * 3 + c + w) % 3 === 0).join(' ')} settings.`,
        ),
      });
    const question = 'cache retry proxy timeout cookie';

    const five = await retrieve(db, hashedEmbedder, { datasetId: 1, query: question, topK: 5 });
    const twenty = await retrieve(db, hashedEmbedder, { datasetId: 1, query: question, topK: 20 });

    expect(five).toHaveLength(5);
    expect(twenty.slice(0, 5)).toEqual(five);
  });
});
