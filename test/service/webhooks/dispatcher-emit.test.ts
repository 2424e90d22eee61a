import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HARNESS_T0, signatureValid, webhookHarness, type WebhookHarness } from '../../helpers/webhook-harness.js';
import { Writable } from 'node:stream';
import type { ReceivedDelivery } from '../../helpers/webhook-receiver.js';
import { createLogger } from '../../../src/shared/logger.js';

let h: WebhookHarness;
beforeEach(async () => {
  h = await webhookHarness();
});
afterEach(() => h.cleanup());

const ENTRY = { entry_id: 12, dataset_id: 1, agent_id: 3, sha256: 'ab'.repeat(32) };

describe('emit', () => {
  it('posts the exact body with signed Standard Webhooks headers', async () => {
    const { webhook, secret } = h.hook();
    const d = h.dispatcher();
    d.start();

    d.emit(1, 'intelligence.processed', ENTRY);
    await d.idle();

    expect(h.receiver.received).toHaveLength(1);
    const [got] = h.receiver.received as [ReceivedDelivery];
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/hook');
    expect(got.body).toBe(`{"type":"intelligence.processed","created_at":"2025-01-01T00:00:00.000Z","data":${JSON.stringify(ENTRY)}}`);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('kbsync-local-service');
    expect(got.headers['webhook-id']).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    expect(got.headers['webhook-timestamp']).toBe(String(HARNESS_T0 / 1000));
    expect(signatureValid(secret, got)).toBe(true);
    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'delivered', attempt: 1, lastStatus: 200, lastError: null }]);
  });

  it('delivers only to the webhooks of that dataset subscribed to that kind, one event id for all', async () => {
    const narrow = h.hook(`${h.receiver.url}/narrow`, ['intelligence.processed']);
    const all = h.hook(`${h.receiver.url}/all`);
    h.hook(`${h.receiver.url}/other-dataset`, undefined, 2);
    const d = h.dispatcher();
    d.start();

    d.emit(1, 'dataset.mode_changed', { agent_id: 3, dataset_id: 1, mode: 'self_learning', previous_mode: 'read_only' });
    await d.idle();
    const afterModeChange = h.receiver.received.map((r) => r.path);
    d.emit('1', 'intelligence.processed', ENTRY);
    await d.idle();

    expect(afterModeChange).toEqual(['/hook/all']);
    const processed = h.receiver.received.slice(1);
    expect(processed.map((r) => r.path).sort()).toEqual(['/hook/all', '/hook/narrow']);
    expect(processed[0]?.headers['webhook-id']).toBe(processed[1]?.headers['webhook-id']);
    expect(processed[0]?.headers['webhook-id']).not.toBe(h.receiver.received[0]?.headers['webhook-id']);
    for (const r of processed) {
      expect(signatureValid(r.path === '/hook/all' ? all.secret : narrow.secret, r)).toBe(true);
    }
    expect(h.deliveries(narrow.webhook.id)).toHaveLength(1);
  });

  it('queues nothing when no webhook is subscribed, and never throws', async () => {
    h.hook(h.receiver.url, ['intelligence.failed']);
    const d = h.dispatcher();
    d.start();

    d.emit(1, 'intelligence.deduped', ENTRY);
    d.emit(99, 'intelligence.failed', ENTRY);
    d.emit('not-an-id', 'intelligence.failed', ENTRY);
    await d.idle();

    expect(h.receiver.received).toEqual([]);
    expect(h.db.prepare('SELECT COUNT(*) FROM webhook_deliveries').pluck().get()).toBe(0);
  });

  it('queues before start() and sends only once started', async () => {
    const { webhook } = h.hook();
    const d = h.dispatcher();

    d.emit(1, 'intelligence.failed', { ...ENTRY, error: 'embedding failed' });
    await d.idle();
    const before = h.receiver.received.length;
    d.start();
    await d.idle();

    expect(before).toBe(0);
    expect(h.receiver.received).toHaveLength(1);
    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'delivered' }]);
  });

  it('sends nothing for an event emitted inside a transaction that rolls back', async () => {
    h.hook();
    const d = h.dispatcher();
    d.start();

    expect(() =>
      h.db.transaction(() => {
        d.emit(1, 'intelligence.processed', ENTRY);
        throw new Error('write failed');
      })(),
    ).toThrow('write failed');
    await d.idle();

    expect(h.receiver.received).toEqual([]);
  });
});

describe('concurrency and logs', () => {
  it('has at most 4 deliveries in flight', async () => {
    h.receiver.reply(...Array<'hold'>(6).fill('hold'));
    for (let i = 0; i < 6; i++) h.hook(`${h.receiver.url}/${i}`);
    const d = h.dispatcher();
    d.start();

    d.emit(1, 'intelligence.processed', ENTRY);
    await h.receiver.waitFor(4);
    const inFlightAtFour = d.inFlight();
    h.receiver.release();
    await h.receiver.waitFor(6);
    h.receiver.release();
    await d.idle();

    expect(inFlightAtFour).toBe(4);
    expect(h.receiver.received).toHaveLength(6);
    expect(h.db.prepare(`SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status`).all()).toEqual([
      { status: 'delivered', n: 6 },
    ]);
  });

  it('never logs the secret or the URL, and logs a final failure as a fixed message', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ level: 'debug' }, sink);
    h.receiver.reply(500, 500, 500, 500, 500, 500);
    const { secret } = h.hook(`${h.receiver.url}?token=url-credential`);
    const d = h.dispatcher({ logger });
    d.start();

    d.emit(1, 'intelligence.processed', ENTRY);
    await d.idle();
    for (const wait of [1_000, 5_000, 30_000, 120_000, 600_000]) {
      h.clock.advance(wait);
      await d.idle();
    }
    await d.test(1, 1);

    const log = lines.join('');
    expect(log).toContain('"msg":"webhook delivery failed"');
    expect(log).not.toContain(secret.slice(6, 20));
    expect(log).not.toContain('url-credential');
  });
});
