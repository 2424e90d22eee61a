import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
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

async function* parts(path: string, size: number, head: Buffer, tail: Buffer): AsyncGenerator<Buffer> {
  yield head;
  // The read stream is opened only when undici starts sending, and closed if the request is torn down.
  // `end` is inclusive; an empty file is not read at all (end -1 is out of range).
  if (size > 0) for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024, end: size - 1 })) yield chunk as Buffer;
  yield tail;
}
