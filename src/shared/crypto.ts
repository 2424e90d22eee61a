import type * as Crypto from 'node:crypto';

/**
 * node:crypto, loaded at its first call. An ES import loads it (and reads its WebCrypto getters)
 * with the importing module; the service needs none of it before it listens, and loading it slowed
 * every `kbsync serve` start (`bench/service-start.ts`).
 */
export function nodeCrypto(): typeof Crypto {
  return process.getBuiltinModule('node:crypto');
}
