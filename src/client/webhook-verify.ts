import { createHmac, timingSafeEqual } from 'node:crypto';
import { webhookMac, webhookSecretKey } from '../shared/webhooks.js';

export { signWebhook } from '../shared/webhooks.js';

/**
 * Webhook signature checks. Standard Webhooks (docs/api.md): `webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` (several, space
 * separated, during a secret rotation), secret `whsec_<base64 key>`. Plus a plain mode for services
 * that send "HMAC-SHA256 of the body" in one header. Results are values; nothing throws.
 * Replay protection (ids seen before) is the receiver's job: it gets the id back.
 */

/** Seconds a timestamp may be away from now. */
export const WEBHOOK_TOLERANCE_SEC = 300;

export type WebhookHeaders = Record<string, string | string[] | undefined> | { get(name: string): string | null };

export type VerifyFailure = 'missing_header' | 'invalid_timestamp' | 'stale_timestamp' | 'bad_signature' | 'invalid_secret';

export type VerifyResult = { ok: true; id: string; timestamp: number } | { ok: false; reason: VerifyFailure };

export type VerifyWebhookInput = {
  headers: WebhookHeaders;
  /** The raw body exactly as received (not re-serialised JSON). */
  body: string | Buffer;
  /** One secret, or several during a rotation. */
  secret: string | readonly string[];
  /** Unix seconds. @default the current time */
  nowSec?: number;
  /** @default 300 */
  toleranceSec?: number;
};

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof headers.get === 'function') return (headers as { get(n: string): string | null }).get(name);
  const h = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(h).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : h[key];
  return (Array.isArray(v) ? v[0] : v) ?? null;
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Checks a Standard Webhooks delivery against one or more secrets. */
export function verifyWebhook(input: VerifyWebhookInput): VerifyResult {
  const id = header(input.headers, 'webhook-id');
  const ts = header(input.headers, 'webhook-timestamp');
  const sig = header(input.headers, 'webhook-signature');
  if (id === null || ts === null || sig === null || id === '' || sig === '') return { ok: false, reason: 'missing_header' };
  const tsText = ts.trim();
  if (!/^\d{1,12}$/.test(tsText)) return { ok: false, reason: 'invalid_timestamp' };
  const timestamp = Number(tsText);
  const now = input.nowSec ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (input.toleranceSec ?? WEBHOOK_TOLERANCE_SEC)) return { ok: false, reason: 'stale_timestamp' };

  const keys = (typeof input.secret === 'string' ? [input.secret] : input.secret).map(webhookSecretKey);
  if (keys.length === 0 || keys.some((k) => k === null)) return { ok: false, reason: 'invalid_secret' };
  const given = sig
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  for (const key of keys as Buffer[]) {
    const expected = webhookMac(key, id, tsText, input.body);
    if (given.some((g) => sameBytes(g, expected))) return { ok: true, id, timestamp };
  }
  return { ok: false, reason: 'bad_signature' };
}

export type VerifyHmacInput = {
  body: string | Buffer;
  /** The shared secret, used as the HMAC key as-is (UTF-8). */
  secret: string;
  /** The signature header's value, e.g. `sha256=3f2a…`; null or undefined when the header is absent. */
  signatureHeaderValue: string | null | undefined;
  encoding: 'hex' | 'base64';
  /** A prefix the value must start with, e.g. `sha256=`. */
  prefix?: string;
};

/** Checks a plain "HMAC-SHA256 of the body" signature (GitHub-style `sha256=<hex>` and the like). */
export function verifyHmacSignature(input: VerifyHmacInput): { ok: true } | { ok: false; reason: 'missing_header' | 'bad_signature' } {
  const value = input.signatureHeaderValue?.trim();
  if (value === undefined || value === '') return { ok: false, reason: 'missing_header' };
  const prefix = input.prefix ?? '';
  if (!value.startsWith(prefix)) return { ok: false, reason: 'bad_signature' };
  const given = Buffer.from(value.slice(prefix.length), input.encoding);
  const expected = createHmac('sha256', input.secret).update(input.body).digest();
  return sameBytes(given, expected) ? { ok: true } : { ok: false, reason: 'bad_signature' };
}
