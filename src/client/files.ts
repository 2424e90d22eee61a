import type { Logger } from '../shared/logger.js';
import type { Http } from './http.js';
import { fileMultipart } from './multipart.js';
import * as S from './schemas.js';
import type { Page, PaidOpts, RemoteFile, UploadResult } from './types.js';

/** File endpoints (v1): list (and page through all), streamed upload, reprocess. */

export interface FileMethods {
  listFiles(p?: Page): Promise<{ files: RemoteFile[]; total: number }>;
  listAllFiles(): Promise<RemoteFile[]>;
  /** Every file, a page at a time (a listing of a million files is never held whole); a file repeated from the page before is left out. */
  filePages(): AsyncGenerator<RemoteFile[]>;
  /**
   * Uploads one file. With `size` (what was hashed and priced), a file of another size is refused with
   * `file_changed` before anything is sent, and exactly that many bytes are sent.
   */
  uploadFile(file: { path: string; name: string; size?: number }, o?: PaidOpts & { signal?: AbortSignal }): Promise<UploadResult>;
  reprocessFile(id: string, o?: PaidOpts): Promise<{ id: string; status: string; creditsCharged: number | null }>;
}

/** Page size listAllFiles asks for (docs/api.md's default). */
export const FILES_PAGE = 1000;

/** File statuses of docs/api.md; any other is treated as "not done" by callers and logged once here. */
export const KNOWN_FILE_STATUSES: ReadonlySet<string> = new Set(['queued', 'processing', 'processed', 'failed']);

/** The file methods of a client bound to `http`. */
export function fileMethods(http: Http, log?: Logger): FileMethods {
  const unknownSeen = new Set<string>();
  const page = async (p?: Page) => {
    const result = await http.call(
      { method: 'GET', api: 'v1', path: '/files/', kind: 'idempotent', query: { limit: p?.limit, offset: p?.offset } },
      S.FileList,
    );
    for (const f of result.files) {
      if (KNOWN_FILE_STATUSES.has(f.status) || unknownSeen.has(f.status)) continue;
      unknownSeen.add(f.status);
      log?.warn({ status: f.status }, 'unknown file status');
    }
    return result;
  };

  async function* filePages(): AsyncGenerator<RemoteFile[]> {
    let before = new Set<string>();
    let listed = 0;
    for (let offset = 0; ;) {
      const { files, total } = await page({ limit: FILES_PAGE, offset });
      // A server that ignores offset repeats page one: stop when a page brings nothing new.
      const fresh = files.filter((f) => !before.has(f.id));
      if (fresh.length === 0) return;
      yield fresh;
      listed += fresh.length;
      if (total !== null && listed >= total) return;
      before = new Set(files.map((f) => f.id));
      offset += files.length;
    }
  }

  return {
    async listFiles(p) {
      const { files, total } = await page(p);
      return { files, total: total ?? (p?.offset ?? 0) + files.length };
    },
    async listAllFiles(): Promise<RemoteFile[]> {
      const byId = new Map<string, RemoteFile>();
      for await (const files of filePages()) for (const f of files) byId.set(f.id, f);
      return [...byId.values()];
    },
    filePages,
    async uploadFile(file, o) {
      const stream = await fileMultipart(file.path, file.name, http.dialect.uploadField, file.size);
      return http.call(
        { method: 'POST', api: 'v1', path: '/files/upload', kind: 'paid', idempotencyKey: o?.idempotencyKey, signal: o?.signal, stream },
        S.UploadResult,
      );
    },
    reprocessFile: (id, o) =>
      http.call(
        {
          method: 'POST',
          api: 'v1',
          path: `/files/${encodeURIComponent(id)}/reprocess`,
          route: '/files/{id}/reprocess',
          kind: 'paid',
          idempotencyKey: o?.idempotencyKey,
          json: {},
        },
        S.Reprocess,
      ),
  };
}
