import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../../src/shared/errors.js';
import { startBridge, type SyncBridge } from '../../../../src/sync/state/pg/sync-bridge.js';
import { freshDatabase } from '../../../helpers/postgres.js';

/**
 * The real PostgreSQL worker, wrapped: once it has taken a `diagnostics` call (blocked in PostgreSQL
 * by the test's lock), `fault` runs 300 ms later in the worker, mid-call. The wrapper's listener is
 * added after the real one (in the import's `then`, before any message is taken off the port).
 */
function faulty(fault: string): (entry: URL) => string {
  return (entry) => `const { workerData } = process.getBuiltinModule('node:worker_threads');
import(${JSON.stringify(entry.href)}).then(() => {
  workerData.port.on('message', (req) => {
    if (req.method === 'diagnostics') setTimeout(() => { ${fault} }, 300);
  });
});`;
}

/** What a call threw: its KbsyncError code and message, and how long it took. */
function failure(bridge: SyncBridge, method: string): { code: string; message: string; ms: number } {
  const t0 = Date.now();
  try {
    bridge.call(method, [], Date.now());
  } catch (err) {
    return {
      code: isKbsyncError(err) ? err.code : `not a KbsyncError: ${String(err)}`,
      message: (err as Error).message,
      ms: Date.now() - t0,
    };
  }
  throw new Error(`${method} answered although its worker died`);
}

const opened: SyncBridge[] = [];
const holders: pg.Client[] = [];
afterEach(async () => {
  for (const b of opened.splice(0)) b.close();
  for (const c of holders.splice(0)) await c.end().catch(() => {});
});

/** A fresh state and a bridge on it (opened: the schema is made) whose worker runs `fault` mid-`diagnostics`. */
async function bridgeOn(label: string, fault: string, stallMs?: number): Promise<{ url: string; bridge: SyncBridge }> {
  const url = await freshDatabase(label);
  const bridge = startBridge(url, { scope: '', register: false }, { worker: faulty(fault), ...(stallMs === undefined ? {} : { stallMs }) });
  opened.push(bridge);
  bridge.call('open', [], Date.now());
  return { url, bridge };
}

/**
 * Another connection takes the schema table (ACCESS EXCLUSIVE, in an open transaction): the worker's
 * `diagnostics` call waits on it in PostgreSQL until the lock goes. `releaseAfter`: PostgreSQL ends
 * that session (and its lock) after so long idle, as this thread, blocked in the call, cannot.
 */
async function lockSchema(url: string, releaseAfter?: string): Promise<void> {
  const holder = new pg.Client({ connectionString: url });
  holder.on('error', () => {});
  await holder.connect();
  holders.push(holder);
  if (releaseAfter !== undefined) await holder.query(`SET idle_in_transaction_session_timeout = '${releaseAfter}'`);
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE kbsync_schema IN ACCESS EXCLUSIVE MODE');
}

// The bound is far under the bridge's 120 s call timeout (which the dead worker used to run into) and far over what a prompt refusal takes.
const PROMPT_MS = 20_000;

describe('a PostgreSQL state worker that dies mid-call', () => {
  it('fails the waiting call at once with state_unavailable when it throws, and every later call too', async () => {
    const { url, bridge } = await bridgeOn('death_throw', `throw new Error('boom in the worker')`);
    await lockSchema(url);
    const got = failure(bridge, 'diagnostics');
    expect(got.code).toBe('state_unavailable');
    expect(got.message).toContain('boom in the worker');
    expect(got.ms).toBeLessThan(PROMPT_MS);
    const later = failure(bridge, 'trackedCount');
    expect(later.code).toBe('state_unavailable');
    expect(later.ms).toBeLessThan(1000);
  }, 60_000);

  it('fails the waiting call at once when it exits', async () => {
    const { url, bridge } = await bridgeOn('death_exit', 'process.exit(3)');
    await lockSchema(url);
    const got = failure(bridge, 'diagnostics');
    expect(got.code).toBe('state_unavailable');
    expect(got.message).toContain('exit code 3');
    expect(got.ms).toBeLessThan(PROMPT_MS);
  }, 60_000);

  it('fails the waiting call when it stops running without a word (no heartbeat), and closes', async () => {
    // A worker whose thread no longer runs any code: its event loop spins in one busy loop for ever.
    const { url, bridge } = await bridgeOn('death_stall', 'for (;;) {}', 1500);
    await lockSchema(url);
    const got = failure(bridge, 'diagnostics');
    expect(got.code).toBe('state_unavailable');
    expect(got.message).toContain('no heartbeat');
    expect(got.ms).toBeGreaterThanOrEqual(1500);
    expect(got.ms).toBeLessThan(PROMPT_MS);
    expect(failure(bridge, 'trackedCount').code).toBe('state_unavailable');
  }, 60_000);

  it('still answers a call that only waits long in PostgreSQL: the heartbeat runs meanwhile', async () => {
    const { url, bridge } = await bridgeOn('death_none', '', 1000);
    await lockSchema(url, '3s');
    const t0 = Date.now();
    expect(bridge.call<{ schemaVersion: number }>('diagnostics', [], Date.now()).schemaVersion).toBeGreaterThan(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2500);
  }, 60_000);
});
