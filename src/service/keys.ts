import { nodeCrypto } from '../shared/crypto.js';
import { sha256Hex } from '../shared/sha256.js';

/** A new API key: `kbs_` and 43 url-safe characters (256 random bits). */
export function newApiKey(): string {
  return `kbs_${nodeCrypto().randomBytes(32).toString('base64url')}`;
}

/** What the database stores for a key: its SHA-256, never the key. */
export function hashApiKey(apiKey: string): string {
  return sha256Hex(apiKey);
}

/** The displayable start of a key (identifies it in listings without revealing it). */
export function keyPrefix(apiKey: string): string {
  return apiKey.slice(0, 12);
}
