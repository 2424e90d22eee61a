import { randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '../../shared/webhooks.js';

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}
