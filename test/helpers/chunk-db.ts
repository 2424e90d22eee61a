import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { afterEach, beforeEach } from 'vitest';
import { migrateChunks } from '../../src/service/store/chunks.js';

/** A fresh in-memory database with the chunk tables for each test of the calling file (closed after it); read `.db` in a test. */
export function useChunkDb(): { readonly db: Database } {
  let current: Database | undefined;
  beforeEach(() => {
    current = new Sqlite(':memory:');
    migrateChunks(current);
  });
  afterEach(() => {
    current?.close();
    current = undefined;
  });
  return {
    get db(): Database {
      if (current === undefined) throw new Error('useChunkDb: the database exists only inside a test');
      return current;
    },
  };
}

/** `n` paragraphs that match no test's query but "filler gardening": the bulk a ranking is measured against. */
export const filler = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `unrelated filler paragraph number ${i} about gardening`);
