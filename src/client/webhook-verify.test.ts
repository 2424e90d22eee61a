import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyHmacSignature, verifyWebhook } from './webhook-verify.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
const now = 1_700_000_000;
const id = 'msg_2b9f';
const body = '{"type":"webhook.test","created_at":"2023-11-14T22:13:20Z","data":{"webhook_id":1}}';

function delivery(over: { id?: string; ts?: number; body?: string; sig?: string } = {}) {
  const ts = over.ts ?? now;
  return {
    headers: {
      'webhook-id': over.id ?? id,
      'webhook-timestamp': String(ts),
      'webhook-signature': over.sig ?? signWebhook(secret, id, ts, body),
    },
    body: over.body ?? body,
  };
}

describe('verifyWebhook', () => {
  it('accepts a valid delivery and returns its id and timestamp', () => {
    expect(verifyWebhook({ ...delivery(), secret, nowSec: now })).toEqual({ ok: true, id, timestamp: now });
  });

  it('signs exactly the Standard Webhooks content with the decoded key', () => {
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${now}.${body}`).digest('base64');

    expect(signWebhook(secret, id, now, body)).toBe(`v1,${expected}`);
  });

  it('accepts a Buffer body and a Headers object', () => {
    const d = delivery();

    const result = verifyWebhook({ headers: new Headers(d.headers), body: Buffer.from(body), secret, nowSec: now });

    expect(result.ok).toBe(true);
  });

  it('finds headers whatever their case', () => {
    const d = delivery();
    const headers = {
      'Webhook-Id': d.headers['webhook-id'],
      'WEBHOOK-TIMESTAMP': d.headers['webhook-timestamp'],
      'Webhook-Signature': d.headers['webhook-signature'],
    };

    expect(verifyWebhook({ headers, body, secret, nowSec: now }).ok).toBe(true);
  });

  it.each([
    ['a tampered body', { ...delivery(), body: body.replace('webhook.test', 'webhook.tesT') }],
    ['a tampered id', { ...delivery(), headers: { ...delivery().headers, 'webhook-id': 'msg_other' } }],
    ['a tampered timestamp', { ...delivery(), headers: { ...delivery().headers, 'webhook-timestamp': String(now + 1) } }],
    ['a signature by another secret', delivery({ sig: signWebhook(otherSecret, id, now, body) })],
    ['a signature of another scheme version', delivery({ sig: signWebhook(secret, id, now, body).replace('v1,', 'v2,') })],
    ['garbage', delivery({ sig: 'v1,!!!!' })],
  ])('rejects %s as bad_signature', (_name, d) => {
    expect(verifyWebhook({ ...d, secret, nowSec: now })).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('rejects the right signature checked with the wrong secret', () => {
    expect(verifyWebhook({ ...delivery(), secret: otherSecret, nowSec: now })).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it.each([
    [-301, 'stale_timestamp'],
    [-300, true],
    [300, true],
    [301, 'stale_timestamp'],
  ] as const)('a timestamp %i s from now → %s', (offset, expected) => {
    const ts = now + offset;

    const result = verifyWebhook({ ...delivery({ ts, sig: signWebhook(secret, id, ts, body) }), secret, nowSec: now });

    expect(result.ok ? true : result.reason).toBe(expected);
  });

  it('honours a custom tolerance', () => {
    expect(verifyWebhook({ ...delivery(), secret, nowSec: now + 60, toleranceSec: 30 })).toEqual({ ok: false, reason: 'stale_timestamp' });
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const)('rejects a delivery without %s', (name) => {
    const d = delivery();
    const headers: Record<string, string> = { ...d.headers };
    delete headers[name];

    expect(verifyWebhook({ headers, body, secret, nowSec: now })).toEqual({ ok: false, reason: 'missing_header' });
  });

  it('rejects a timestamp that is not unix seconds', () => {
    const d = delivery();

    const result = verifyWebhook({ headers: { ...d.headers, 'webhook-timestamp': '2023-11-14T22:13:20Z' }, body, secret, nowSec: now });

    expect(result).toEqual({ ok: false, reason: 'invalid_timestamp' });
  });

  it('rejects an empty secret', () => {
    expect(verifyWebhook({ ...delivery(), secret: 'whsec_', nowSec: now })).toEqual({ ok: false, reason: 'invalid_secret' });
  });

  describe('secret rotation', () => {
    it('accepts a header with two signatures when either matches', () => {
      const sig = `${signWebhook(otherSecret, id, now, body)} ${signWebhook(secret, id, now, body)}`;

      expect(verifyWebhook({ ...delivery({ sig }), secret, nowSec: now }).ok).toBe(true);
      expect(verifyWebhook({ ...delivery({ sig }), secret: otherSecret, nowSec: now }).ok).toBe(true);
    });

    it('accepts a delivery signed by any of two configured secrets', () => {
      expect(verifyWebhook({ ...delivery(), secret: [otherSecret, secret], nowSec: now }).ok).toBe(true);
    });

    it('rejects when no signature matches any secret', () => {
      const third = `whsec_${randomBytes(32).toString('base64')}`;
      const sig = `${signWebhook(third, id, now, body)} v1,${Buffer.alloc(32).toString('base64')}`;

      expect(verifyWebhook({ ...delivery({ sig }), secret: [secret, otherSecret], nowSec: now })).toEqual({
        ok: false,
        reason: 'bad_signature',
      });
    });
  });
});

describe('verifyHmacSignature (plain mode)', () => {
  const plainSecret = 'shared-secret';
  const hex = createHmac('sha256', plainSecret).update(body).digest('hex');
  const b64 = createHmac('sha256', plainSecret).update(body).digest('base64');

  it.each([
    ['hex with a prefix', { signatureHeaderValue: `sha256=${hex}`, encoding: 'hex', prefix: 'sha256=' }],
    ['upper-case hex', { signatureHeaderValue: hex.toUpperCase(), encoding: 'hex' }],
    ['base64', { signatureHeaderValue: b64, encoding: 'base64' }],
  ] as const)('accepts %s', (_name, input) => {
    expect(verifyHmacSignature({ body, secret: plainSecret, ...input })).toEqual({ ok: true });
  });

  it.each([
    ['a tampered body', { body: `${body} `, signatureHeaderValue: `sha256=${hex}` }],
    ['a missing prefix', { body, signatureHeaderValue: hex }],
    ['a truncated signature', { body, signatureHeaderValue: `sha256=${hex.slice(0, 40)}` }],
  ])('rejects %s', (_name, input) => {
    expect(verifyHmacSignature({ secret: plainSecret, encoding: 'hex', prefix: 'sha256=', ...input })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('rejects a wrong secret', () => {
    expect(verifyHmacSignature({ body, secret: 'other', signatureHeaderValue: hex, encoding: 'hex' })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it.each([null, undefined, ''])('reports a missing header (%j)', (value) => {
    expect(verifyHmacSignature({ body, secret: plainSecret, signatureHeaderValue: value, encoding: 'hex' })).toEqual({
      ok: false,
      reason: 'missing_header',
    });
  });
});
