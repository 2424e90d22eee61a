import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { ServiceError } from '../service-error.js';
import { wrongContentType } from './errors.js';
import { streamToFile } from './upload-stream.js';

/** What an upload's one file part held, once it is on disk. */
export type ReceivedFile = { name: string; size: number; sha256: string };

export type UploadOptions = {
  /** The multipart field that must carry the file. */
  field: string;
  /** The plan's limit: one byte more is a 413 and the partial file is deleted. */
  maxBytes: number;
  /** Where the file part is written (a new file). */
  dest: string;
  /** Refuses the part's file name (throws) before anything is written. */
  checkName: (name: string) => void;
};

/** The multipart limits: one file; plain fields are read past (and ignored), but not without end. */
const LIMITS = { files: 1, fields: 20, fieldSize: 65_536, headerPairs: 100 };

const invalid = (message: string) => new ServiceError('invalid_request', message);

/**
 * Reads a `multipart/form-data` request: plain fields are skipped, the first part with a file name
 * must be `options.field` and is streamed to `options.dest` (hashed and counted as it goes), and a
 * second file part is refused. Resolves once the whole body has been read; on any failure the
 * partial file is gone before it rejects, and the rest of the body is not read.
 */
export async function receiveUpload(raw: IncomingMessage, options: UploadOptions): Promise<ReceivedFile> {
  const contentType = raw.headers['content-type'];
  if (contentType === undefined || !/^multipart\/form-data\s*(;|$)/i.test(contentType))
    throw invalid(wrongContentType({ expects: 'multipart/form-data', contentType }));
  // Loaded with the first upload: a start of the service that never takes one does not pay for it.
  // Through the default export (module.exports): bundled, this CommonJS package has no named exports.
  const { Busboy } = (await import('@fastify/busboy')).default;
  let parser: InstanceType<typeof Busboy>;
  try {
    // One byte over the limit reaches streamToFile, which answers 413 and deletes the partial file.
    // Names are the sync side's source-relative paths: preservePath keeps their folders.
    parser = new Busboy({
      headers: { ...raw.headers, 'content-type': contentType },
      limits: { ...LIMITS, fileSize: options.maxBytes + 1 },
      preservePath: true,
    });
  } catch (err) {
    // The one refusal left once the type is multipart/form-data: no boundary parameter.
    throw new ServiceError('invalid_request', 'malformed multipart Content-Type: it needs a boundary', { cause: err });
  }

  return new Promise<ReceivedFile>((resolve, reject) => {
    let failed = false;
    let name: string | undefined;
    let stream: Readable | undefined;
    let written: Promise<{ size: number; sha256: string }> | undefined;

    /** Stops reading, and rejects once the file part (if one was started) has been deleted. */
    const fail = (err: unknown): void => {
      if (failed) return;
      failed = true;
      raw.unpipe(parser);
      stream?.destroy(err instanceof Error ? err : new Error(String(err)));
      void (written ?? Promise.resolve()).then(
        () => reject(err),
        () => reject(err),
      );
    };

    parser.on('file', (fieldname, file, filename) => {
      if (failed || written !== undefined) {
        file.resume();
        if (!failed) fail(invalid('send exactly one file part'));
        return;
      }
      try {
        if (fieldname !== options.field) throw invalid(`${options.field}: missing (got a file part named "${fieldname}")`);
        options.checkName(filename);
      } catch (err) {
        file.resume();
        fail(err);
        return;
      }
      name = filename;
      stream = file;
      written = streamToFile(file, options.dest, options.maxBytes);
      written.catch(fail);
    });
    parser.on('field', () => {});
    parser.on('filesLimit', () => fail(invalid('send exactly one file part')));
    parser.on('fieldsLimit', () => fail(invalid('too many multipart fields')));
    parser.on('error', (err: unknown) => fail(new ServiceError('invalid_request', 'malformed multipart body', { cause: err })));
    parser.on('finish', () => {
      if (failed) return;
      if (written === undefined || name === undefined) {
        fail(invalid(`${options.field}: missing (send one file part named "${options.field}")`));
        return;
      }
      const fileName = name;
      written.then((file) => {
        if (!failed) resolve({ name: fileName, ...file });
      }, fail);
    });
    // A client that goes away mid-body: the parser never finishes.
    raw.on('aborted', () => fail(invalid('the upload was aborted before its end')));
    raw.on('error', (err) => fail(new ServiceError('invalid_request', 'the upload was interrupted', { cause: err })));
    raw.pipe(parser);
  });
}
