import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { receiveWebhook } from '../../../src/watch/http/webhooks.js';
import { signWebhook } from '../../../src/client/webhook-verify.js';
import type { StateStore } from '../../../src/sync/state/index.js';
import { tempState } from './fixtures/state-dir.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const sha = (c: string): string => c.repeat(64);
const entry = (c: string, remoteId: string) => ({
  sha256: sha(c),
  agentId: '3',
  remoteId,
  status: 'pending',
  source: 'kb',
  path: `faq.yaml#${c}`,
  title: null,
});

/** Delivers one signed `intelligence.*` event to the daemon's receiver, over `store`. */
function deliver(store: StateStore, id: string, type: string, data: Record<string, unknown>): number {
  const body = JSON.stringify({ type, created_at: new Date().toISOString(), data });
  const ts = Math.floor(Date.now() / 1000);
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signWebhook(SECRET, id, ts, body) };
  return receiveWebhook({ secret: SECRET, store, nowMs: () => Date.now() }, headers, Buffer.from(body)).status;
}

describe('intelligence entries in the state', () => {
  let t: ReturnType<typeof tempState>;
  let store: StateStore;
  beforeEach(() => {
    t = tempState();
    store = t.open();
  });
  afterEach(() => t.cleanup());

  it('intelligence.processed and intelligence.failed set the status (and reason) of the entry they name; deduped and unknown ids change nothing', () => {
    store.recordEntries([entry('a', '11'), entry('b', '12')]);

    expect(deliver(store, 'evt_1', 'intelligence.processed', { entry_id: 11, sha256: sha('a') })).toBe(200);
    expect(deliver(store, 'evt_2', 'intelligence.failed', { entry_id: 12, sha256: sha('b'), error: 'embedding failed' })).toBe(200);
    expect(deliver(store, 'evt_3', 'intelligence.deduped', { entry_id: 11, sha256: sha('a') })).toBe(200);
    expect(deliver(store, 'evt_4', 'intelligence.processed', { entry_id: 99 })).toBe(200);

    const tracked = store.trackedEntries();
    expect(tracked.get(sha('a'))).toMatchObject({ remoteId: '11', status: 'processed', error: null, source: 'kb', path: 'faq.yaml#a' });
    expect(tracked.get(sha('b'))).toMatchObject({ remoteId: '12', status: 'failed', error: 'embedding failed' });
    expect(tracked.size).toBe(2);
  });

  it('an event received before its write was recorded is applied when the entry is recorded', () => {
    expect(deliver(store, 'evt_early', 'intelligence.failed', { entry_id: 21, error: 'too long' })).toBe(200);
    store.recordEntries([entry('c', '21'), entry('d', '22')]);
    const tracked = store.trackedEntries();
    expect(tracked.get(sha('c'))).toMatchObject({ status: 'failed', error: 'too long' });
    expect(tracked.get(sha('d'))).toMatchObject({ status: 'pending', error: null });
  });
});
