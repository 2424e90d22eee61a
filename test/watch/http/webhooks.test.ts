import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signWebhook } from '../../../src/client/webhook-verify.js';
import { openState, type StateStore } from '../../../src/sync/state/index.js';
import { receiveWebhook, type WebhookDeps } from '../../../src/watch/http/webhooks.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
const NOW_MS = Date.UTC(2026, 10, 26, 7, 0, 0);
const NOW_SEC = NOW_MS / 1000;

type Delivery = { id: string; ts: string; sig: string; body: string };

function signed(o: { id?: string; tsSec?: number; type?: string; data?: object; key?: string } = {}): Delivery {
  const id = o.id ?? `evt_${randomBytes(8).toString('hex')}`;
  const tsSec = o.tsSec ?? NOW_SEC;
  const body = JSON.stringify({
    type: o.type ?? 'dataset.mode_changed',
    created_at: new Date(tsSec * 1000).toISOString(),
    data: o.data ?? { agent_id: 3, dataset_id: 1, mode: 'self_learning', previous_mode: 'read_only' },
  });
  return { id, ts: String(tsSec), body, sig: signWebhook(o.key ?? secret, id, tsSec, body) };
}

const headersOf = (d: Delivery): Record<string, string> => ({ 'webhook-id': d.id, 'webhook-timestamp': d.ts, 'webhook-signature': d.sig });

let dir: string;
let statePath: string;
let state: StateStore;
let nowMs = NOW_MS;
const deps = (): WebhookDeps => ({ secret, store: state, nowMs: () => nowMs });
const deliver = (d: Delivery) => receiveWebhook(deps(), headersOf(d), Buffer.from(d.body));

beforeEach(() => {
  dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'kbsync-webhooks-'));
  statePath = join(dir, 'state.db');
  state = openState(statePath);
  nowMs = NOW_MS;
});
afterEach(() => {
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /webhooks deliveries to the daemon', () => {
  it('accepts a signed delivery and records an intelligence or mode event with its data, a test event without', () => {
    const mode = signed({ id: 'evt_mode' });
    const processed = signed({
      id: 'evt_proc',
      type: 'intelligence.processed',
      data: { entry_id: 7, dataset_id: 1, agent_id: 3, sha256: 'ab' },
    });
    const test = signed({ id: 'evt_test', type: 'webhook.test', data: { webhook_id: 1 } });

    const answers = [deliver(mode), deliver(processed), deliver(test)];

    expect(answers.map((a) => [a.status, a.body])).toEqual([
      [200, { status: 'accepted', recorded: true }],
      [200, { status: 'accepted', recorded: true }],
      [200, { status: 'accepted', recorded: false }],
    ]);
    const events = Object.fromEntries(state.webhookEvents().map((e) => [e.id, e]));
    expect(events.evt_mode).toEqual({
      id: 'evt_mode',
      type: 'dataset.mode_changed',
      sentAtSec: NOW_SEC,
      receivedAtMs: NOW_MS,
      data: { agent_id: 3, dataset_id: 1, mode: 'self_learning', previous_mode: 'read_only' },
    });
    expect(events.evt_proc).toMatchObject({ type: 'intelligence.processed', data: { entry_id: 7, sha256: 'ab' } });
    expect(events.evt_test).toMatchObject({ type: 'webhook.test', data: null });
  });

  it('refuses a forged signature, another secret, a changed body, a stale or future timestamp and missing headers, writing nothing', () => {
    const good = signed();
    const answers = {
      forged: deliver({ ...good, sig: `v1,${randomBytes(32).toString('base64')}` }),
      otherSecret: deliver(signed({ key: otherSecret })),
      body: deliver({ ...good, body: good.body.replace('self_learning', 'read_only') }),
      stale: deliver(signed({ tsSec: NOW_SEC - 301 })),
      future: deliver(signed({ tsSec: NOW_SEC + 301 })),
      noId: receiveWebhook(deps(), { 'webhook-timestamp': good.ts, 'webhook-signature': good.sig }, Buffer.from(good.body)),
    };

    expect(Object.fromEntries(Object.entries(answers).map(([k, a]) => [k, `${a.status} ${a.outcome}`]))).toEqual({
      forged: '401 bad_signature',
      otherSecret: '401 bad_signature',
      body: '401 bad_signature',
      stale: '401 stale_timestamp',
      future: '401 stale_timestamp',
      noId: '400 missing_header',
    });
    expect(state.webhookEvents()).toEqual([]);
  });

  it('accepts a timestamp 300 s old, and refuses a replay of an accepted id, also after the state is closed and opened again', () => {
    const d = signed({ id: 'evt_once', tsSec: NOW_SEC - 300 });
    expect(deliver(d).status).toBe(200);
    expect(deliver(d)).toMatchObject({ status: 409, outcome: 'replayed' });
    // Re-signed with a fresh timestamp: the id alone makes it a replay.
    expect(deliver(signed({ id: 'evt_once' }))).toMatchObject({ status: 409, outcome: 'replayed' });

    state.close();
    state = openState(statePath);
    nowMs += 200_000;

    expect(deliver(signed({ id: 'evt_once', tsSec: nowMs / 1000 }))).toMatchObject({ status: 409, outcome: 'replayed' });
    expect(state.webhookEvents().map((e) => e.id)).toEqual(['evt_once']);
  });

  it('refuses a signed delivery whose body is not an event object, and records nothing', () => {
    const id = 'evt_bad';
    const body = '[1,2]';
    const answer = deliver({ id, ts: String(NOW_SEC), body, sig: signWebhook(secret, id, NOW_SEC, body) });
    expect(answer).toMatchObject({ status: 400, outcome: 'invalid_body' });
    expect(state.webhookEventSeen(id)).toBe(false);
  });

  it('10,000 forgeries (mutated signatures, bodies, timestamps, ids, replays): none accepted, nothing written', () => {
    const original = signed({ id: 'evt_original' });
    expect(deliver(original).status).toBe(200);
    const validSig = Buffer.from(original.sig.slice(3), 'base64');

    const changedText = (text: string) =>
      fc
        .oneof(
          fc.string({ minLength: 1 }).map((s) => text + s),
          fc
            .nat({ max: Math.max(0, text.length - 1) })
            .chain((at) =>
              fc
                .integer({ min: 1, max: 0xffff })
                .map((d) => text.slice(0, at) + String.fromCharCode((text.charCodeAt(at) + d) % 0x10000) + text.slice(at + 1)),
            ),
          fc.nat({ max: Math.max(0, text.length - 1) }).map((n) => text.slice(0, n)),
          fc.string(),
        )
        .filter((t) => t !== text);
    const mutatedSig = fc.oneof(
      fc.uint8Array({ minLength: 0, maxLength: 48 }).map((b) => `v1,${Buffer.from(b).toString('base64')}`),
      fc.tuple(fc.nat({ max: 31 }), fc.nat({ max: 7 })).map(([at, bit]) => {
        const b = Buffer.from(validSig);
        b[at] = (b[at] as number) ^ (1 << bit);
        return `v1,${b.toString('base64')}`;
      }),
      fc.constant(original.sig.replace('v1,', 'v2,')),
      fc.constant(original.sig.slice(3)),
      changedText(original.sig),
    );
    const forgery: fc.Arbitrary<Delivery> = fc.oneof(
      mutatedSig.map((sig) => ({ ...original, id: 'evt_forged', sig })),
      changedText(original.body).map((body) => ({
        ...original,
        id: 'evt_forged',
        body,
        sig: signWebhook(secret, 'evt_forged', NOW_SEC, original.body),
      })),
      fc
        .integer({ min: -400, max: 400 })
        .filter((d) => d !== 0)
        .map((d) => ({
          ...original,
          id: 'evt_forged',
          ts: String(NOW_SEC + d),
          sig: signWebhook(secret, 'evt_forged', NOW_SEC, original.body),
        })),
      changedText('evt_forged').map((id) => ({ ...original, id, sig: signWebhook(secret, 'evt_forged', NOW_SEC, original.body) })),
      // Properly signed, but stale: the timestamp is more than 300 s away.
      fc
        .integer({ min: 301, max: 10_000_000 })
        .chain((d) => fc.constantFrom(-d, d))
        .map((d) => signed({ id: 'evt_forged', tsSec: NOW_SEC + d })),
      // Properly signed with another secret.
      fc.string({ minLength: 1 }).map((id) => signed({ id: `evt_${id}`, key: otherSecret })),
      // The accepted delivery again, as sent or re-signed with a new timestamp.
      fc.integer({ min: -300, max: 300 }).map((d) => signed({ id: original.id, tsSec: NOW_SEC + d })),
    );

    let accepted = 0;
    fc.assert(
      fc.property(forgery, (d) => {
        const answer = receiveWebhook(deps(), headersOf(d), Buffer.from(d.body));
        if (answer.status === 200) accepted++;
        return answer.status !== 200;
      }),
      { numRuns: 10_000, seed: 16 },
    );

    expect(accepted).toBe(0);
    expect(state.webhookEvents().map((e) => e.id)).toEqual(['evt_original']);
  });
});
