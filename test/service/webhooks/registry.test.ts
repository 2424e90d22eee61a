import type { Database } from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { webhookTestDb, type WebhookTestDb } from '../../helpers/webhook-db.js';
import { isKbsyncError } from '../../../src/shared/errors.js';
import { WebhookError } from '../../../src/service/webhooks/errors.js';
import { WEBHOOK_EVENT_KINDS } from '../../../src/service/webhooks/events.js';
import { createWebhook, getWebhook, listWebhooks, MAX_WEBHOOKS_PER_DATASET } from '../../../src/service/webhooks/registry.js';

let tdb: WebhookTestDb;
let db: Database;

beforeEach(() => {
  tdb = webhookTestDb();
  db = tdb.open();
});
afterEach(() => tdb.cleanup());

function refusal(fn: () => unknown): WebhookError {
  try {
    fn();
  } catch (err) {
    if (err instanceof WebhookError) return err;
    throw err;
  }
  throw new Error('expected a WebhookError');
}

describe('createWebhook URL rules', () => {
  it.each([
    ['https://example.com/hook', false],
    ['https://example.com/hook', true],
    ['https://10.0.0.5:8443/x?token=1', false],
    ['http://127.0.0.1/hook', true],
    ['http://127.0.0.1:9999/hook', true],
    ['http://localhost:3000/hook', true],
    ['http://LOCALHOST/hook', true],
    ['http://[::1]:8080/hook', true],
  ])('accepts %s (allowInsecure: %s)', (url, allowInsecure) => {
    const { webhook } = createWebhook(db, { datasetId: 1, url }, { allowInsecure });

    expect(webhook.url).toBe(url);
  });

  it.each([
    ['http://127.0.0.1/hook', false, /--allow-insecure-webhooks/],
    ['http://localhost:3000/hook', false, /--allow-insecure-webhooks/],
    ['http://[::1]/hook', false, /--allow-insecure-webhooks/],
    ['http://example.com/hook', true, /https/],
    ['http://192.168.1.2/hook', true, /https/],
    ['http://127.0.0.1.example.com/hook', true, /https/],
    ['http://example.com/hook', false, /https/],
    ['ftp://example.com/hook', true, /https/],
    ['not a url', true, /valid absolute URL/],
    ['/relative/path', true, /valid absolute URL/],
    ['', true, /non-empty/],
    [`https://example.com/${'a'.repeat(2100)}`, false, /at most 2048/],
  ])('refuses %s (allowInsecure: %s) with validation_failed', (url, allowInsecure, message) => {
    const err = refusal(() => createWebhook(db, { datasetId: 1, url }, { allowInsecure }));

    expect(err.code).toBe('validation_failed');
    expect(err.message).toMatch(message);
    expect(isKbsyncError(err, 'validation_failed')).toBe(true);
    expect(listWebhooks(db, 1)).toEqual([]);
  });

  it('refuses a non-string url', () => {
    const err = refusal(() => createWebhook(db, { datasetId: 1, url: 42 as unknown as string }, { allowInsecure: true }));

    expect(err.code).toBe('validation_failed');
  });
});

describe('createWebhook events', () => {
  it('subscribes to all four kinds by default', () => {
    const { webhook } = createWebhook(db, { datasetId: 1, url: 'https://a.test/h' }, { allowInsecure: false });

    expect(webhook.events).toEqual(['intelligence.processed', 'intelligence.failed', 'intelligence.deduped', 'dataset.mode_changed']);
    expect(webhook.events).toEqual([...WEBHOOK_EVENT_KINDS]);
  });

  it('keeps the chosen kinds, deduplicated, in canonical order', () => {
    const events = ['dataset.mode_changed', 'intelligence.failed', 'dataset.mode_changed'];

    const { webhook } = createWebhook(db, { datasetId: 1, url: 'https://a.test/h', events }, { allowInsecure: false });

    expect(webhook.events).toEqual(['intelligence.failed', 'dataset.mode_changed']);
  });

  it.each([
    [['intelligence.processed', 'file.processed'], /"file.processed"/],
    [['webhook.test'], /"webhook.test"/],
    [[], /non-empty/],
    [[7], /number/],
  ])('refuses events %j with validation_failed', (events, message) => {
    const err = refusal(() =>
      createWebhook(db, { datasetId: 1, url: 'https://a.test/h', events: events as string[] }, { allowInsecure: false }),
    );

    expect(err.code).toBe('validation_failed');
    expect(err.message).toMatch(message);
  });
});

describe('createWebhook limits and secrets', () => {
  it('allows 10 per dataset and answers limit_reached to the 11th, counting datasets apart', () => {
    for (let i = 0; i < MAX_WEBHOOKS_PER_DATASET; i++) {
      createWebhook(db, { datasetId: 1, url: `https://a.test/${i}` }, { allowInsecure: false });
    }

    const err = refusal(() => createWebhook(db, { datasetId: 1, url: 'https://a.test/11' }, { allowInsecure: false }));
    const other = createWebhook(db, { datasetId: 2, url: 'https://b.test/1' }, { allowInsecure: false });

    expect(MAX_WEBHOOKS_PER_DATASET).toBe(10);
    expect(err.code).toBe('limit_reached');
    expect(listWebhooks(db, 1)).toHaveLength(10);
    expect(other.webhook.id).toBeGreaterThan(0);
  });

  it('returns a whsec_ secret of 32 random bytes at creation, and never again', () => {
    const a = createWebhook(db, { datasetId: 1, url: 'https://a.test/h' }, { allowInsecure: false });
    const b = createWebhook(db, { datasetId: 1, url: 'https://a.test/h' }, { allowInsecure: false });

    const listed = listWebhooks(db, 1);
    const got = getWebhook(db, 1, a.webhook.id);

    expect(a.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.secret.slice(6), 'base64')).toHaveLength(32);
    expect(a.secret).not.toBe(b.secret);
    expect(Object.keys(a.webhook).sort()).toEqual(['created_at', 'events', 'id', 'url']);
    expect(listed.map((w) => Object.keys(w).sort())).toEqual([
      ['created_at', 'events', 'id', 'url'],
      ['created_at', 'events', 'id', 'url'],
    ]);
    expect(JSON.stringify(listed)).not.toContain(a.secret.slice(6));
    expect(JSON.stringify(got)).not.toContain(a.secret.slice(6));
  });

  it('stamps created_at from the injected clock, as ISO-8601 UTC', () => {
    const { webhook } = createWebhook(
      db,
      { datasetId: '1', url: 'https://a.test/h' },
      { allowInsecure: false, now: () => Date.UTC(2025, 4, 6, 7, 8, 9) },
    );

    expect(webhook.created_at).toBe('2025-05-06T07:08:09.000Z');
  });
});

describe('listWebhooks and getWebhook', () => {
  it("scope by dataset; another dataset's webhook is null, as is an unknown id", () => {
    const mine = createWebhook(db, { datasetId: 1, url: 'https://a.test/h' }, { allowInsecure: false });
    const theirs = createWebhook(db, { datasetId: 2, url: 'https://b.test/h' }, { allowInsecure: false });

    expect(listWebhooks(db, 1)).toEqual([mine.webhook]);
    expect(listWebhooks(db, '2')).toEqual([theirs.webhook]);
    expect(getWebhook(db, 1, mine.webhook.id)).toEqual(mine.webhook);
    expect(getWebhook(db, '1', String(mine.webhook.id))).toEqual(mine.webhook);
    expect(getWebhook(db, 1, theirs.webhook.id)).toBeNull();
    expect(getWebhook(db, 1, 999)).toBeNull();
    expect(getWebhook(db, 1, 'abc')).toBeNull();
    expect(listWebhooks(db, 3)).toEqual([]);
  });
});
