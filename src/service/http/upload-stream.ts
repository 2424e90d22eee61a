import { nodeCrypto } from '../../shared/crypto.js';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ServiceError } from '../service-error.js';

/**
 * Streams `source` into a new file at `dest`, hashing and counting as it goes; memory stays flat.
 * The moment more than `maxBytes` have arrived it stops with 413 `file_too_large` and deletes the
 * partial file; any other failure deletes it too.
 */
export async function streamToFile(source: Readable, dest: string, maxBytes: number): Promise<{ size: number; sha256: string }> {
  const hash = nodeCrypto().createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) {
        done(new ServiceError('file_too_large', `file exceeds this plan's limit of ${maxBytes} bytes`));
        return;
      }
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(source, meter, createWriteStream(dest, { flags: 'wx', mode: 0o600 }));
  } catch (err) {
    await rm(dest, { force: true });
    if (err instanceof ServiceError || (err as NodeJS.ErrnoException).syscall !== undefined) throw err;
    // Not ours and not the disk's: the multipart stream itself broke (truncated, malformed, aborted).
    throw new ServiceError('invalid_request', 'malformed or truncated multipart body', { cause: err });
  }
  return { size, sha256: hash.digest('hex') };
}
