import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { deleteChunks, migrateChunks, replaceChunks, searchChunks } from '../store/chunks.js';
import { hashedEmbedder, type Embedder } from './embedder.js';
import { searchHybrid, VECTOR_WEIGHT } from './hybrid.js';
import { prepareVectors, retrieve } from './retrieve.js';

let db: Database;

/** Eight short help pages, one topic each (written for this test). */
const PAGES = [
  'Timeouts. Set how many milliseconds the client waits for the server before it gives up on the request and aborts it.',
  'Retries. A failed request is attempted again up to the retry limit; the delay between attempts grows each time.',
  'Proxies. To reach the internet through a corporate proxy, pass an agent that tunnels the connection.',
  'Cookies. A cookie jar stores the cookies a server sets and sends them back on later requests, like a browser session.',
  'Caching. Responses can be kept in a cache so repeating the same request does not go to the network again.',
  'Pagination. Walk through every page of a list endpoint by following the Link header until no next page is left.',
  'Authentication. Send a username and password with basic authentication, or a bearer token in the authorization header.',
  'Uploads. Send a file as multipart form data with a FormData body; the boundary is set for you.',
];

beforeEach(() => {
  db = new Sqlite(':memory:');
  migrateChunks(db);
  PAGES.forEach((text, i) => replaceChunks(db, { datasetId: 1, sourceId: i + 1, chunks: [text] }));
  replaceChunks(db, { datasetId: 2, sourceId: 99, chunks: ['Timeouts in another dataset: the server gives up.'] });
});

afterEach(() => {
  db.close();
});

const ask = (query: string, topK = 5) => retrieve(db, hashedEmbedder, { datasetId: 1, query, topK });

describe('hybrid retrieval with the built-in vectors', () => {
  it.each([
    ['My call hangs when the server never answers; how do I stop waiting after a while?', 1],
    ['Can a failed call be attempted once more, automatically?', 2],
    ['How do I go out through the company proxy?', 3],
    ['How do I keep cookies between calls like a browser would?', 4],
    ['Can repeated requests be answered without hitting the network?', 5],
    ['How do I read every page a list API splits its results into?', 6],
    ['How do I log in with my user name and password?', 7],
    ['How do I attach a file to a multipart form?', 8],
  ])('%j → page %i first', async (question, page) => {
    const hits = await ask(question);

    expect(hits[0]?.knowledgeSourceId).toBe(page);
  });

  it('scores every hit in [0, 1], best first, never from another dataset', async () => {
    const hits = await ask('server request timeout retries', 20);

    expect(hits.length).toBeGreaterThan(2);
    for (const h of hits) expect(h.score >= 0 && h.score <= 1).toBe(true);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
    expect(hits.some((h) => h.knowledgeSourceId === 99)).toBe(false);
  });

  it('finds nothing for a query with no searchable term, and honours score_threshold', async () => {
    const all = await ask('cookie jar browser session');
    const threshold = ((all[0]?.score ?? 0) + (all[1]?.score ?? 0)) / 2;

    expect(await ask('how do I do it?')).toEqual([]);
    expect(
      await retrieve(db, hashedEmbedder, { datasetId: 1, query: 'cookie jar browser session', topK: 5, scoreThreshold: threshold }),
    ).toEqual(all.slice(0, 1));
  });

  it('drops a deleted source from the vector results too', async () => {
    await ask('cookies');
    deleteChunks(db, 4);

    expect((await ask('cookie jar browser session')).map((h) => h.knowledgeSourceId)).not.toContain(4);
  });
});

/** An embedder that knows one synonym pair no word overlap can find: "feline" is about page 9's cats. */
const synonymEmbedder: Embedder = {
  model: 'test-synonyms',
  batchSize: 4,
  embed: async (texts) => texts.map((t) => Float32Array.from(/\b(cat|feline)\b/i.test(t) ? [1, 0] : [0, 1])),
};

describe('hybrid fusion', () => {
  it('finds through the vectors what no word matches, scored by the vector share', async () => {
    replaceChunks(db, { datasetId: 1, sourceId: 9, chunks: ['Our cat sleeps all day.'] });

    const lexicalOnly = searchChunks(db, { datasetId: 1, query: 'feline', topK: 5 });
    const hits = await retrieve(db, synonymEmbedder, { datasetId: 1, query: 'feline', topK: 5 });

    expect(lexicalOnly).toEqual([]);
    expect(hits).toEqual([
      {
        text: 'Our cat sleeps all day.',
        score: expect.closeTo(VECTOR_WEIGHT, 6),
        knowledgeSourceId: 9,
        chunkIndex: 0,
        origin: { heading: null, firstRow: null, lastRow: null },
      },
    ]);
  });

  it('lexicalFirst scans no vector when BM25 found a full list, and scans them all when it did not', async () => {
    replaceChunks(db, { datasetId: 1, sourceId: 10, chunks: Array.from({ length: 120 }, (_, i) => `whisker note ${i}`) });
    replaceChunks(db, { datasetId: 1, sourceId: 11, chunks: ['Our cat sleeps all day.'] });
    const vectors = await prepareVectors(db, 1, synonymEmbedder, 'feline whisker');
    if (vectors === undefined) throw new Error('no vectors');

    const sources = (hits: { knowledgeSourceId: number }[]) => hits.map((h) => h.knowledgeSourceId);
    const scanned = searchHybrid(db, { datasetId: 1, query: 'feline whisker', topK: 5, vectors });
    const lexicalFirst = searchHybrid(db, { datasetId: 1, query: 'feline whisker', topK: 5, vectors: { ...vectors, lexicalFirst: true } });
    const few = searchHybrid(db, { datasetId: 1, query: 'feline', topK: 5, vectors: { ...vectors, lexicalFirst: true } });

    expect(sources(scanned)).toContain(11);
    expect(sources(lexicalFirst)).not.toContain(11);
    expect(sources(few)).toEqual([11]);
  });

  it('without vectors ranks and scores exactly as BM25 does, scaled by its share', () => {
    const bm25 = searchChunks(db, { datasetId: 1, query: 'request server', topK: 5 });
    const hybrid = searchHybrid(db, { datasetId: 1, query: 'request server', topK: 5 });

    expect(hybrid.map((h) => h.knowledgeSourceId)).toEqual(bm25.map((h) => h.knowledgeSourceId));
    hybrid.forEach((h, i) => expect(h.score).toBeCloseTo((1 - VECTOR_WEIGHT) * (bm25[i]?.score ?? NaN), 12));
  });
});
