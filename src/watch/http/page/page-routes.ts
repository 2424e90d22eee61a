import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, Readable } from 'node:stream';
import type { Logger } from '../../../shared/logger.js';
import type { ExplainAnswer } from '../../explain-answer.js';
import type { RetryAnswer } from '../../retry-failed.js';
import { PAGE_HEADERS, SESSION_COOKIE, sameOrigin, type PageAccess } from './access.js';
import { PAGE_ICON, PAGE_SCRIPT, PAGE_STYLE } from './assets.js';
import { esc } from './html.js';
import { REGIONS, renderPage, renderRegion, type Region } from './page-html.js';
import type { PageModel } from './page-model.js';
import { createLiveStream } from './live-stream.js';

/** What the page reads and asks of the daemon. */
export type PageDeps = {
  model(): PageModel;
  /** The document of `kbsync status --json`, in chunks. */
  status(): Iterable<string>;
  /** The daemon now: a restarted one has another pid or start. */
  hello(): { pid: number; startedAt: string };
  explain(path: string): Promise<ExplainAnswer>;
  rescan(): { message: string };
  /** Retries one failed file: a reprocess (a paid call) planned by the next cycle, through the outbox. */
  retry(source: string, path: string): Promise<RetryAnswer>;
  /** A search on the dataset: a paid call (1 credit), recorded in the state before it is sent. */
  query(text: string): Promise<{ results: unknown[]; credits: unknown }>;
};

export type DaemonPage = {
  /** Answers the request when it is the page's (`/`, `/assets/*`, `/login`, `/api/*`); false otherwise. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): boolean;
  /** The daemon's snapshot changed: open pages get the regions that changed. */
  changed(): void;
  /** Tells open pages the daemon stops, and ends their streams. */
  close(): void;
};

const MAX_POST_BYTES = 16 * 1024;

export function createDaemonPage(o: { access: PageAccess; deps: PageDeps; logger: Pick<Logger, 'warn'> }): DaemonPage {
  const { access, deps } = o;
  const regionsOf = (m: PageModel): Record<Region, string> =>
    Object.fromEntries(REGIONS.map((r) => [r, renderRegion(r, m)])) as Record<Region, string>;
  const live = createLiveStream({
    hello: () => ({ ...deps.hello(), csrf: access.csrf }),
    regions: () => regionsOf(deps.model()),
  });

  const send = (res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void => {
    res.writeHead(status, { ...PAGE_HEADERS, 'content-type': type, ...extra });
    res.end(body);
  };
  const json = (res: ServerResponse, status: number, body: unknown): void =>
    send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(body)}\n`);
  const failed = (res: ServerResponse) => (err: unknown) => {
    o.logger.warn({ err: String(err) }, 'status page: a request failed');
    if (!res.headersSent) json(res, 500, { error: 'internal', message: err instanceof Error ? err.message : String(err) });
  };

  const signIn = (res: ServerResponse, status: number, note: string, hint: string): void =>
    send(
      res,
      status,
      'text/html; charset=utf-8',
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>kbsync watch: sign in</title><link rel="icon" href="/assets/icon.svg"><link rel="stylesheet" href="/assets/page.css"></head>
<body><main id="main"><section class="card"><h1>kbsync watch</h1><p>${esc(note)}</p><p class="small">${esc(hint)}</p>
${access.noToken ? '' : '<form action="/login" method="post"><label for="token">Token (watch.httpToken)</label><div class="row"><input id="token" name="token" type="password" required autocomplete="current-password"><button type="submit">Sign in</button></div></form>'}
</section></main></body></html>\n`,
    );

  const routes = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    const method = req.method ?? 'GET';
    if (path === '/assets/page.js') return send(res, 200, 'text/javascript; charset=utf-8', PAGE_SCRIPT);
    if (path === '/assets/page.css') return send(res, 200, 'text/css; charset=utf-8', PAGE_STYLE);
    if (path === '/assets/icon.svg' || path === '/favicon.ico') return send(res, 200, 'image/svg+xml', PAGE_ICON);
    if (path === '/login' && method === 'POST') {
      readBody(req)
        .then((body) => {
          const token = new URLSearchParams(body ?? '').get('token') ?? '';
          if (!sameOrigin(req) || !access.tokenMatches(token) || access.sessionValue === null)
            return signIn(res, 401, 'That is not the token.', 'The token is watch.httpToken (or KBSYNC_HTTP_TOKEN) of this daemon.');
          send(res, 303, 'text/plain; charset=utf-8', 'signed in\n', {
            location: '/',
            'set-cookie': `${SESSION_COOKIE}=${access.sessionValue}; HttpOnly; SameSite=Strict; Path=/`,
          });
        })
        .catch(failed(res));
      return;
    }
    const refused = access.refusal(req);
    if (refused !== null) {
      if (path === '/' && refused.status === 401) return signIn(res, 401, 'This page needs the daemon\u2019s token.', refused.hint);
      return json(res, refused.status, { error: refused.error, hint: refused.hint });
    }
    if (method === 'GET' || method === 'HEAD') {
      if (path === '/') return send(res, 200, 'text/html; charset=utf-8', renderPage(deps.model(), { csrf: access.csrf }));
      if (path === '/api/status') return streamJson(res, deps.status(), o.logger);
      if (path === '/api/events') return live.open(req, res, PAGE_HEADERS);
      if (path === '/api/explain') {
        const asked = new URL(req.url ?? '/', 'http://x').searchParams.get('path')?.trim() ?? '';
        if (asked === '') return json(res, 400, { error: 'path_required', hint: 'GET /api/explain?path=source/path' });
        deps
          .explain(asked)
          .then((a) => json(res, a.found ? 200 : 404, a))
          .catch(failed(res));
        return;
      }
      return json(res, 404, { error: 'not_found' });
    }
    if (method !== 'POST') return json(res, 405, { error: 'method_not_allowed' });
    if (!access.postAllowed(req)) {
      req.resume();
      return json(res, 403, {
        error: 'csrf',
        hint: 'a POST needs Authorization: Bearer TOKEN, or the page\u2019s CSRF token from the page itself (application/json, same origin)',
      });
    }
    if (path === '/api/rescan') {
      req.resume();
      return json(res, 202, deps.rescan());
    }
    if (path === '/api/retry') {
      readJson(req)
        .then(async (asked) => {
          if (typeof asked.source !== 'string' || typeof asked.path !== 'string' || asked.path === '')
            return json(res, 400, { error: 'file_required', hint: 'POST /api/retry {"source": "docs", "path": "report.docx"}' });
          const answer = await deps.retry(asked.source, asked.path);
          json(res, answer.accepted ? 202 : 409, answer);
          live.changed();
        })
        .catch(failed(res));
      return;
    }
    if (path === '/api/query') {
      readJson(req)
        .then(async (asked) => {
          const text = typeof asked.text === 'string' ? asked.text.trim() : '';
          if (text === '') return json(res, 400, { error: 'text_required', hint: 'POST /api/query {"text": "what to search for"}' });
          try {
            const answer = await deps.query(text);
            json(res, 200, answer);
          } catch (err) {
            const code = (err as { code?: unknown }).code;
            json(res, 409, {
              error: typeof code === 'string' ? code : 'query_failed',
              message: err instanceof Error ? err.message : String(err),
            });
          }
          live.changed();
        })
        .catch(failed(res));
      return;
    }
    req.resume();
    json(res, 404, { error: 'not_found' });
  };

  return {
    handle(req, res, path) {
      if (path !== '/' && path !== '/login' && path !== '/favicon.ico' && !path.startsWith('/assets/') && !path.startsWith('/api/'))
        return false;
      try {
        routes(req, res, path);
      } catch (err) {
        failed(res)(err);
      }
      return true;
    },
    changed: live.changed,
    close: live.close,
  };
}

/** A JSON document sent in chunks with the socket's backpressure: a large state's items are never one string. */
function streamJson(res: ServerResponse, chunks: Iterable<string>, logger: Pick<Logger, 'warn'>): void {
  res.writeHead(200, { ...PAGE_HEADERS, 'content-type': 'application/json; charset=utf-8' });
  pipeline(Readable.from(chunks), res, (err) => {
    if (err) logger.warn({ err: String(err) }, 'status page: GET /api/status failed');
  });
}

/** A small JSON request body as an object: {} when it is not JSON, not an object, or passes MAX_POST_BYTES. */
async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const body = await readBody(req);
  try {
    const value: unknown = JSON.parse(body ?? '');
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A small request body as text; null when it passes MAX_POST_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_POST_BYTES) chunks.push(chunk);
  }
  return size > MAX_POST_BYTES ? null : Buffer.concat(chunks).toString('utf8');
}
