import { randomUUID } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import { isSupportedFileName } from '../../../shared/file-types.js';
import { sha256Hex } from '../../../shared/sha256.js';
import { uploadCost } from '../../../shared/plans.js';
import { assertBalance, commitPaid } from '../../billing/charge.js';
import { ServiceError, notFound } from '../../service-error.js';
import { insertFile, listFiles, requeueFile } from '../../store/files.js';
import { isoAt } from '../../store/time.js';
import type { ServiceContext } from '../context.js';
import { wrongContentType } from '../errors.js';
import { idempotent, resolveDeferred } from '../idempotency.js';
import { authOf, parseIdParam, parsePage } from '../request.js';
import { streamToFile } from '../upload-stream.js';
import { fileJson } from '../wire.js';
import { V1 } from './paths.js';

/** The multipart field that carries the file (docs/api.md, chosen). */
const UPLOAD_FIELD = 'file';
const MAX_NAME_LENGTH = 1024;

type Parts = AsyncIterableIterator<Multipart>;

/**
 * The request's parts and its first file part (plain fields before it are skipped), or a 400/415
 * naming what is wrong. The caller must stream the file, then call `assertNoMoreFiles`.
 */
async function filePart(req: FastifyRequest, maxBytes: number): Promise<{ part: MultipartFile; parts: Parts }> {
  if (!req.isMultipart())
    throw new ServiceError(
      'invalid_request',
      wrongContentType({ expects: 'multipart/form-data', contentType: req.headers['content-type'] }),
    );
  const options = {
    // One byte over the limit reaches streamToFile, which answers 413 and deletes the partial file.
    // A second file part trips `files` (FST_FILES_LIMIT) once the first is read: see assertNoMoreFiles.
    limits: { fileSize: maxBytes + 1, files: 1, fields: 20, parts: 25, fieldSize: 65_536, headerPairs: 100 },
    // Read by the plugin for every iteration mode, though only typed for req.file().
    throwFileSizeLimit: false,
    // Names are the sync side's source-relative paths: keep the folders.
    preservePath: true,
  };
  const parts = req.parts(options);
  let part: MultipartFile | undefined;
  try {
    for (let next = await parts.next(); next.done !== true; next = await parts.next()) {
      if (next.value.type === 'file') {
        part = next.value;
        break;
      }
    }
  } catch (err) {
    throw multipartError(err);
  }
  if (part === undefined)
    throw new ServiceError('invalid_request', `${UPLOAD_FIELD}: missing (send one file part named "${UPLOAD_FIELD}")`);
  if (part.fieldname !== UPLOAD_FIELD)
    throw new ServiceError('invalid_request', `${UPLOAD_FIELD}: missing (got a file part named "${part.fieldname}")`);
  const name = part.filename;
  if (name === '' || name.length > MAX_NAME_LENGTH || /[\u0000-\u001f]/.test(name)) {
    throw new ServiceError(
      'invalid_request',
      `${UPLOAD_FIELD}: the part needs a file name (1..${MAX_NAME_LENGTH} characters, no control characters)`,
    );
  }
  if (!isSupportedFileName(name)) throw new ServiceError('unsupported_file_type', `unsupported file type: ${name}`);
  return { part, parts };
}

/** Reads the parts after the file (plain fields are ignored): a second file part is a 400, before anything is stored or charged. */
async function assertNoMoreFiles(parts: Parts): Promise<void> {
  try {
    for (let next = await parts.next(); next.done !== true; next = await parts.next()) {
      if (next.value.type === 'file') throw new ServiceError('invalid_request', 'send exactly one file part');
    }
  } catch (err) {
    throw multipartError(err);
  }
}

/** A multipart failure as the client sees it: our own errors and known limits as they are, the rest as malformed. */
function multipartError(err: unknown): unknown {
  if (err instanceof ServiceError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^FST_(FILES|PARTS|FIELDS)_LIMIT$|^FST_PROTO_VIOLATION$/.test(code)) return err;
  return new ServiceError('invalid_request', 'malformed multipart body', { cause: err });
}

/** Files: list, upload (streamed to disk), reprocess. */
export function registerFileRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { db } = ctx;

  app.get(`${V1}/files/`, async (req) => {
    const { datasetId } = authOf(req);
    const page = parsePage(req.query);
    const { rows, total } = listFiles(db, datasetId, page);
    return { files: rows.map(fileJson), total };
  });

  app.post(
    `${V1}/files/upload`,
    { config: { accepts: 'multipart/form-data' } },
    idempotent(
      ctx,
      async (req, idem) => {
        const { datasetId, plan } = authOf(req);
        // The size (and so the cost) is known only after streaming: refuse early when even the base cost is short.
        if (idem?.previous == null) assertBalance(db, datasetId, uploadCost(0));
        const maxBytes = ctx.maxFileBytes(plan);
        const { part, parts } = await filePart(req, maxBytes);
        const name = part.filename;
        const tmpPath = join(ctx.tmpDir, randomUUID());
        const storedPath = join(ctx.filesDir, randomUUID());
        try {
          const { size, sha256 } = await streamToFile(part.file, tmpPath, maxBytes);
          await assertNoMoreFiles(parts);
          const replay = resolveDeferred(idem, sha256Hex(`POST upload\n${sha256}\n${name}`));
          if (replay !== null) return replay;
          // One time for the ledger row and the file row.
          const now = isoAt(ctx.clock());
          const result = commitPaid(db, { datasetId, now, onCharged: idem?.onCharged }, () => {
            // Refused before the file is moved into place (commitPaid checks again, after the write).
            assertBalance(db, datasetId, uploadCost(size));
            const row = insertFile(db, { datasetId, name, size, sha256, storedPath, now });
            renameSync(tmpPath, storedPath);
            return {
              op: { kind: 'upload', bytes: size },
              ref: String(row.id),
              status: 201,
              respond: (credits) => ({ id: row.id, name, size, sha256, status: row.status, credits_charged: credits }),
            };
          });
          ctx.kickWorker();
          return result;
        } catch (err) {
          rmSync(storedPath, { force: true });
          throw err;
        } finally {
          rmSync(tmpPath, { force: true });
        }
      },
      { deferred: true },
    ),
  );

  app.post(
    `${V1}/files/:id/reprocess`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId } = authOf(req);
      const id = parseIdParam((req.params as Record<string, string>)['id'], 'file');
      const now = isoAt(ctx.clock());
      const result = commitPaid(db, { datasetId, now, onCharged: idem?.onCharged }, () => {
        const row = requeueFile(db, datasetId, id, now);
        if (row === undefined) throw notFound('file');
        return {
          op: { kind: 'reprocess' },
          ref: String(id),
          status: 202,
          respond: (credits) => ({ id, status: row.status, credits_charged: credits }),
        };
      });
      ctx.kickWorker();
      return result;
    }),
  );
}
