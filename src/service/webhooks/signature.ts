import { nodeCrypto } from '../../shared/crypto.js';
import { WEBHOOK_SECRET_PREFIX } from '../../shared/webhooks.js';

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + nodeCrypto().randomBytes(32).toString('base64');
}
