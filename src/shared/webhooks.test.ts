import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, webhookSecretKey } from './webhooks.js';

/** A new secret as the service makes them (src/service/webhooks/signature.ts). */
const generateWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** An independent Standard Webhooks check written from docs/api.md, not from the code under test. */
function verifies(secret: string, id: string, ts: number, body: string, header: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest();
  return header.split(' ').some((part) => {
    const [version, sig] = part.split(',');
    const given = Buffer.from(sig ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

describe('signWebhook', () => {
  it('reproduces the Standard Webhooks specification test vector', () => {
    const header = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );

    expect(header).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs id, timestamp and body so that changing any of them breaks verification', () => {
    const secret = generateWebhookSecret();
    const body = '{"type":"intelligence.processed","created_at":"2025-01-01T00:00:00.000Z","data":{"entry_id":3}}';

    const header = signWebhook(secret, 'evt_abc', 1735689600, body);

    expect(verifies(secret, 'evt_abc', 1735689600, body, header)).toBe(true);
    expect(verifies(secret, 'evt_abd', 1735689600, body, header)).toBe(false);
    expect(verifies(secret, 'evt_abc', 1735689601, body, header)).toBe(false);
    expect(verifies(secret, 'evt_abc', 1735689600, body.replace('3', '4'), header)).toBe(false);
    expect(verifies(generateWebhookSecret(), 'evt_abc', 1735689600, body, header)).toBe(false);
  });

  it('refuses an empty secret, and takes a bare base64 key as a whsec_ one', () => {
    expect(() => signWebhook('whsec_', 'evt', 1, '{}')).toThrow('empty webhook secret');
    expect(webhookSecretKey('')).toBeNull();
    const secret = generateWebhookSecret();
    expect(webhookSecretKey(secret)).toHaveLength(32);
    expect(signWebhook(secret.slice('whsec_'.length), 'evt', 1, '{}')).toBe(signWebhook(secret, 'evt', 1, '{}'));
  });
});
