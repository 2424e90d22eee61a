import type pg from 'pg';

/** The worker's handle on its one connection: queries, nested transactions, and the caller's clock. */
export type Db = {
  /** The rows of one statement. */
  q<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Rows changed by one statement. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * Runs `fn` in a transaction (READ COMMITTED; rows are locked with SELECT ... FOR UPDATE), or in a
   * savepoint when one is open. The outermost one is run again when PostgreSQL chose it as a deadlock
   * victim (40P01) or a serialization failure (40001): nothing of it was committed.
   */
  tx<T>(fn: () => Promise<T>): Promise<T>;
  /** Opens, commits or rolls back a transaction the main thread holds open across calls (StateStore.transaction). */
  begin(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** True while a transaction (or the main thread's) is open. */
  inTransaction(): boolean;
  /** The caller's clock at the current call (the main thread's `now`, sent with each call). */
  nowMs(): number;
  setNow(ms: number): void;
};

const RETRY_CODES = new Set(['40P01', '40001']);
const MAX_TX_ATTEMPTS = 8;

/** Wraps a connected client. */
export function createDb(client: pg.Client): Db {
  let depth = 0;
  let now = Date.now();
  const q = async <R>(sql: string, params: readonly unknown[] = []): Promise<R[]> =>
    (await client.query(sql, params as unknown[])).rows as R[];
  const run = async (sql: string, params: readonly unknown[] = []): Promise<number> =>
    (await client.query(sql, params as unknown[])).rowCount ?? 0;
  const tx = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (depth > 0) {
      const name = `sp${depth}`;
      await client.query(`SAVEPOINT ${name}`);
      depth++;
      try {
        const value = await fn();
        await client.query(`RELEASE SAVEPOINT ${name}`);
        return value;
      } catch (err) {
        await client.query(`ROLLBACK TO SAVEPOINT ${name}`);
        throw err;
      } finally {
        depth--;
      }
    }
    for (let attempt = 1; ; attempt++) {
      await client.query('BEGIN');
      depth = 1;
      try {
        const value = await fn();
        await client.query('COMMIT');
        return value;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        const code = (err as { code?: string }).code;
        if (code === undefined || !RETRY_CODES.has(code) || attempt >= MAX_TX_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
      } finally {
        depth = 0;
      }
    }
  };
  return {
    q,
    run,
    tx,
    async begin() {
      if (depth > 0) throw new Error('a transaction is already open on the PostgreSQL state');
      await client.query('BEGIN');
      depth = 1;
    },
    async commit() {
      depth = 0;
      await client.query('COMMIT');
    },
    async rollback() {
      depth = 0;
      await client.query('ROLLBACK');
    },
    inTransaction: () => depth > 0,
    nowMs: () => now,
    setNow: (ms) => (now = ms),
  };
}
