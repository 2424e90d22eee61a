import { randomBytes } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { KbsyncError } from '../shared/errors.js';
import type { StreamBody } from './http.js';

/**
 * A multipart/form-data body with one file part, streamed from disk: memory stays flat whatever
 * the file's size, and the exact content-length is known up front (no chunked encoding).
 *
 * The file name goes in `filename="..."` as raw UTF-8 with `\` and `"` backslash-escaped
 * (RFC 7578 §4.2 forbids `filename*`); busboy (fastify's multipart parser) and Python's
 * multipart parsers both read this form. A CR or LF cannot be carried at all: such names are refused.
 */

/** The quoted-string form of a multipart parameter value. */
export function quoteParam(value: string): string {
  if (/[\r\n]/.test(value)) throw new KbsyncError('invalid_request', 'a file name may not contain a line break');
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * Preamble, file bytes and epilogue of a one-file multipart body, as a StreamBody. With `expectedSize`
 * (the size the caller hashed and priced), a file of another size is refused with `file_changed`
 * before anything is sent. The body carries exactly the size stat'ed here: a file that grows while
 * it is sent cannot make the request longer (nor its price higher); one that shrinks ends the body
 * short, which undici refuses before the server can accept it.
 */
export async function fileMultipart(path: string, fileName: string, field: string, expectedSize?: number): Promise<StreamBody> {
  const boundary = `----kbsync${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\n` +
      `Content-Disposition: form-data; name=${quoteParam(field)}; filename=${quoteParam(fileName)}\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
    'utf8',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  const { size } = await stat(path);
  if (expectedSize !== undefined && size !== expectedSize) {
    throw new KbsyncError(
      'file_changed',
      `${path} is ${size} bytes now, ${expectedSize} when it was hashed: not sent; the next run hashes it again`,
    );
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + size + tail.length,
    open: () => parts(path, size, head, tail),
  };
}

/** Bytes read from the file at a time, into one of READ_RING buffers of this size. */
export const READ_CHUNK_BYTES = 256 * 1024;
/**
 * Buffers one upload reads into, in turn. A buffer is read into again READ_RING - 1 chunks after it was
 * yielded; see parts() for why no byte undici still holds is overwritten.
 */
export const READ_RING = 4;

/**
 * The body's parts: the preamble, the file's bytes, the epilogue. The file is read into a small ring of
 * buffers owned by this one body (never shared with another upload), not into a new buffer per read:
 * a large upload made thousands of buffers that waited for the GC, many of them at a time
 * (docs/benchmarks.md, upload memory).
 *
 * Reuse is safe because of how undici sends an iterable body: it writes each chunk to the socket
 * and, when the write returns false, waits for 'drain' (everything queued written) before asking
 * for the next one. So when it asks, the bytes still queued are less than the socket's highWaterMark
 * (64 KiB by default on Node 22+), and the queue is FIFO: a chunk yielded READ_RING - 1 chunks ago
 * can only still be queued if the (READ_RING - 1) x 256 KiB yielded after it are too, 768 KiB in
 * all, more than any highWaterMark undici's sockets use. The last chunk of a file may be short; after
 * it comes the epilogue and the end, and the ring is dropped with the body.
 */
async function* parts(path: string, size: number, head: Buffer, tail: Buffer): AsyncGenerator<Buffer> {
  yield head;
  // The file is opened only when undici starts sending, and closed if the request is torn down
  // (undici returns the iterator, which runs the finally). An empty file is not opened at all.
  if (size > 0) {
    const file = await open(path, 'r');
    try {
      const ring: Buffer[] = [];
      let position = 0;
      for (let turn = 0; position < size; turn++) {
        const slot = turn % READ_RING;
        const buffer = (ring[slot] ??= Buffer.allocUnsafeSlow(Math.min(READ_CHUNK_BYTES, size)));
        const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, size - position), position);
        // The file shrank since it was stat'ed: the body ends short, which undici refuses.
        if (bytesRead === 0) break;
        position += bytesRead;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await file.close();
    }
  }
  yield tail;
}
