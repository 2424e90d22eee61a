import { nodeCrypto } from '../../../shared/crypto.js';
import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Routes } from '../routing.js';
import { isSupportedFileName } from '../../../shared/file-types.js';
import { sha256Hex } from '../../../shared/sha256.js';
import { uploadCost } from '../../../shared/plans.js';
import { assertBalance, commitPaid } from '../../billing/charge.js';
import { ServiceError, notFound } from '../../service-error.js';
import { insertFile, listFiles, requeueFile } from '../../store/files.js';
import { isoAt } from '../../store/time.js';
import type { ServiceContext } from '../context.js';
import { idempotent, resolveDeferred } from '../idempotency.js';
import { parseIdParam, parsePage } from '../request.js';
import { receiveUpload } from '../multipart-upload.js';
import { fileJson } from '../wire.js';
import { V1 } from './paths.js';

/** The multipart field that carries the file (docs/api.md, chosen). */
const UPLOAD_FIELD = 'file';
const MAX_NAME_LENGTH = 1024;

/** A part's file name: a source-relative path of 1..MAX_NAME_LENGTH characters, of a supported type. */
function checkName(name: string): void {
  if (name === '' || name.length > MAX_NAME_LENGTH || /[\u0000-\u001f]/.test(name)) {
    throw new ServiceError(
      'invalid_request',
      `${UPLOAD_FIELD}: the part needs a file name (1..${MAX_NAME_LENGTH} characters, no control characters)`,
    );
  }
  if (!isSupportedFileName(name)) throw new ServiceError('unsupported_file_type', `unsupported file type: ${name}`);
}

/** Files: list, upload (streamed to disk), reprocess. */
export function registerFileRoutes(app: Routes, ctx: ServiceContext): void {
  const { db } = ctx;

  app.get(`${V1}/files/`, async (req) => {
    const { datasetId } = req.auth;
    const page = await parsePage(req.query);
    const { rows, total } = listFiles(db, datasetId, page);
    return { files: rows.map(fileJson), total };
  });

  app.post(
    `${V1}/files/upload`,
    idempotent(
      ctx,
      async (req, idem) => {
        const { datasetId, plan } = req.auth;
        // The size (and so the cost) is known only after streaming: refuse early when even the base cost is short.
        if (idem?.previous == null) assertBalance(db, datasetId, uploadCost(0));
        const tmpPath = join(ctx.tmpDir, nodeCrypto().randomUUID());
        const storedPath = join(ctx.filesDir, nodeCrypto().randomUUID());
        try {
          const { name, size, sha256 } = await receiveUpload(req.raw, {
            field: UPLOAD_FIELD,
            maxBytes: ctx.maxFileBytes(plan),
            dest: tmpPath,
            checkName,
          });
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
    { accepts: 'multipart/form-data' },
  );

  app.post(
    `${V1}/files/:id/reprocess`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId } = req.auth;
      const id = parseIdParam(req.params['id'], 'file');
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
