import { nodeCrypto } from './crypto.js';

/** SHA-256 of a string or buffer, lowercase hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return nodeCrypto().createHash('sha256').update(data).digest('hex');
}
