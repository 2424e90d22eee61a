import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HARNESS_T0, signatureValid, webhookHarness, type WebhookHarness } from '../../helpers/webhook-harness.js';
import { closedPortUrl } from '../../helpers/webhook-receiver.js';

let h: WebhookHarness;
beforeEach(async () => {
  h = await webhookHarness();
});
afterEach(() => h.cleanup());

const ENTRY = { entry_id: 12, dataset_id: 1, agent_id: 3, sha256: 'ab'.repeat(32) };

describe('retries', () => {
  it('retries after 1 s then 5 s with the same webhook-id and a fresh timestamp and signature', async () => {
    h.receiver.reply(500, 503);
    const { webhook, secret } = h.hook();
    const d = h.dispatcher();
    d.start();

    d.emit(1, 'intelligence.processed', ENTRY);
    await d.idle();
    const afterFirst = { received: h.receiver.received.length, timers: h.clock.pending(), rows: h.deliveries(webhook.id) };
    h.clock.advance(999);
    await d.idle();
    const justBefore = h.receiver.received.length;
    h.clock.advance(1);
    await d.idle();
    const afterSecond = { received: h.receiver.received.length, timers: h.clock.pending() };
    h.clock.advance(5_000);
    await d.idle();

    expect(afterFirst).toMatchObject({
      received: 1,
      timers: [1_000],
      rows: [{ status: 'pending', attempt: 1, lastStatus: 500, lastError: 'HTTP 500', nextAttemptAt: HARNESS_T0 + 1_000 }],
    });
    expect(justBefore).toBe(1);
    expect(afterSecond).toEqual({ received: 2, timers: [5_000] });
    expect(h.receiver.received).toHaveLength(3);
    expect(new Set(h.receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(h.receiver.received.map((r) => r.headers['webhook-timestamp'])).toEqual(
      [HARNESS_T0, HARNESS_T0 + 1_000, HARNESS_T0 + 6_000].map((t) => String(t / 1000)),
    );
    expect(h.receiver.received.every((r) => signatureValid(secret, r))).toBe(true);
    expect(new Set(h.receiver.received.map((r) => r.body)).size).toBe(1);
    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'delivered', attempt: 3, lastStatus: 200, lastError: null }]);
    expect(h.clock.pending()).toEqual([]);
  });

  it('sends the retry when its timer fires a little early and the clock moves on while the queue is read', async () => {
    // Node's timers run on the event loop's cached clock, so a 1,000 ms timer can fire when Date.now()
    // says 999 ms have passed; on a loaded machine the next read of the clock is already later.
    h.receiver.reply(500);
    const { webhook } = h.hook();
    let ticking = false;
    const d = h.dispatcher({
      now: () => {
        const t = h.clock.now();
        if (ticking) h.clock.advance(1);
        return t;
      },
      schedule: (fn, delayMs) =>
        h.clock.schedule(() => {
          ticking = true;
          fn();
        }, delayMs - 1),
    });
    d.start();
    d.emit(1, 'intelligence.processed', ENTRY);
    await d.idle();

    for (let i = 0; i < 5 && h.receiver.received.length < 2; i++) {
      h.clock.advance(1_000);
      await d.idle();
    }

    expect(h.receiver.received).toHaveLength(2);
    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'delivered', attempt: 2 }]);
  });

  it('marks a delivery failed after 6 attempts (the first + 5 retries, waits 1 s, 5 s, 30 s, 2 min, 10 min) and stops trying', async () => {
    h.receiver.reply(500, 500, 500, 500, 500, 500);
    const { webhook } = h.hook();
    const d = h.dispatcher();
    d.start();
    d.emit(1, 'intelligence.processed', ENTRY);
    await d.idle();
    const waits: number[][] = [];

    for (const wait of [1_000, 5_000, 30_000, 120_000, 600_000]) {
      waits.push(h.clock.pending());
      h.clock.advance(wait);
      await d.idle();
    }
    const timersAfterLast = h.clock.pending();
    h.clock.advance(3_600_000);
    await d.idle();

    expect(waits).toEqual([[1_000], [5_000], [30_000], [120_000], [600_000]]);
    expect(timersAfterLast).toEqual([]);
    expect(h.receiver.received).toHaveLength(6);
    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'failed', attempt: 6, lastStatus: 500, lastError: 'HTTP 500' }]);
  });

  it('delivers on the sixth attempt after the 10 min wait', async () => {
    h.receiver.reply(500, 500, 500, 500, 500);
    const { webhook } = h.hook();
    const d = h.dispatcher();
    d.start();
    d.emit(1, 'intelligence.processed', ENTRY);
    await d.idle();

    for (const wait of [1_000, 5_000, 30_000, 120_000, 600_000]) {
      h.clock.advance(wait);
      await d.idle();
    }

    expect(h.receiver.received).toHaveLength(6);
    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'delivered', attempt: 6, lastStatus: 200 }]);
  });

  it('treats a refused connection as a failed attempt with no status', async () => {
    const { webhook } = h.hook(await closedPortUrl());
    const d = h.dispatcher();
    d.start();

    d.emit(1, 'intelligence.processed', ENTRY);
    await d.idle();

    expect(h.deliveries(webhook.id)).toMatchObject([
      { status: 'pending', attempt: 1, lastStatus: null, lastError: expect.stringMatching(/^network error/) },
    ]);
    expect(h.clock.pending()).toEqual([1_000]);
  });

  it('fails at once, without sending, a loopback http URL when the service now runs without the insecure flag', async () => {
    const { webhook } = h.hook();
    const d = h.dispatcher({ allowInsecure: false });
    d.start();

    d.emit(1, 'intelligence.processed', ENTRY);
    await d.idle();

    expect(h.receiver.received).toEqual([]);
    expect(h.deliveries(webhook.id)).toMatchObject([{ status: 'failed', attempt: 1, lastStatus: null, lastError: 'url not allowed' }]);
  });
});
