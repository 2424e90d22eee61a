import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { webhookHarness, type WebhookHarness } from '../../helpers/webhook-harness.js';

let h: WebhookHarness;
beforeEach(async () => {
  h = await webhookHarness();
});
afterEach(() => h.cleanup());

const ENTRY = { entry_id: 12, dataset_id: 1, agent_id: 3, sha256: 'ab'.repeat(32) };

describe('durability', () => {
  it('after a restart, sends what was due and schedules what was not', async () => {
    h.receiver.reply(500);
    const { webhook } = h.hook();
    const first = h.dispatcher();
    first.start();
    first.emit(1, 'intelligence.processed', ENTRY);
    await first.idle();
    await first.stop();
    first.emit(1, 'intelligence.deduped', ENTRY);
    h.db.close();
    h.clock.advance(500);

    const reopened = h.tdb.open();
    const second = h.dispatcher({ db: reopened });
    second.start();
    await second.idle();
    const afterStart = h.receiver.received.map((r) => JSON.parse(r.body).type);
    h.clock.advance(500);
    await second.idle();

    expect(afterStart).toEqual(['intelligence.processed', 'intelligence.deduped']);
    expect(h.receiver.received.map((r) => JSON.parse(r.body).type)).toEqual([
      'intelligence.processed',
      'intelligence.deduped',
      'intelligence.processed',
    ]);
    expect(h.receiver.received[0]?.headers['webhook-id']).toBe(h.receiver.received[2]?.headers['webhook-id']);
    expect(h.deliveries(webhook.id, reopened)).toMatchObject([
      { type: 'intelligence.processed', status: 'delivered', attempt: 2 },
      { type: 'intelligence.deduped', status: 'delivered', attempt: 1 },
    ]);
  });

  it('stop() waits for an in-flight delivery and records it', async () => {
    h.receiver.reply('hold');
    const { webhook } = h.hook();
    const d = h.dispatcher();
    d.start();
    d.emit(1, 'intelligence.processed', ENTRY);
    await h.receiver.waitFor(1);

    const stopped = d.stop();
    h.receiver.release(204);
    await stopped;

    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'delivered', attempt: 1, lastStatus: 204 }]);
  });

  it('stop() aborts a delivery still hanging after stopTimeoutMs, without counting it, and a restart sends it', async () => {
    h.receiver.reply('hold');
    const { webhook } = h.hook();
    const first = h.dispatcher({ stopTimeoutMs: 50 });
    first.start();
    first.emit(1, 'intelligence.processed', ENTRY);
    await h.receiver.waitFor(1);

    await first.stop();
    const afterStop = h.deliveries(webhook.id);
    const second = h.dispatcher();
    second.start();
    await second.idle();

    expect(afterStop).toMatchObject([{ status: 'pending', attempt: 0 }]);
    expect(h.receiver.received).toHaveLength(2);
    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'delivered', attempt: 1 }]);
  });
});
