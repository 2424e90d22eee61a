import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { KbsyncError } from '../../shared/errors.js';
import type { DaemonSnapshot } from '../snapshot.js';
import type { DaemonPage } from './page/page-routes.js';

// The CommonJS module: an ES import of node:http reads its lazy WebSocket exports, which load Node's own undici: a cost of every start.
const { createServer } = process.getBuiltinModule('node:http');

/** `--http HOST:PORT` parsed; the port may be 0 (any free port). */
export function parseListenAddress(value: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = m === null ? NaN : Number(m[2]);
  if (m === null || port > 65535) throw new KbsyncError('usage', `--http: HOST:PORT (for example 127.0.0.1:9464), got "${value}"`);
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}

export type DaemonHttp = { address: string; port: number; close(): Promise<void> };

/** Largest webhook body read; a larger delivery is refused (413) unread. */
const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** Handles one POST /webhooks body (see webhooks.ts); null when no secret is configured. */
export type WebhookHandler = (headers: IncomingHttpHeaders, body: Buffer) => { status: number; body: Record<string, unknown> };

type Readiness = ReturnType<Parameters<typeof startDaemonHttp>[0]['ready']>;

/** What /readyz answers for a daemon's snapshot (null: none published yet). */
export function readiness(s: DaemonSnapshot | null): Readiness {
  if (s === null) return { ready: false, unreachable: null };
  const t = s.target;
  const e = s.lastError;
  const failing = s.ready && e !== null && (s.lastSuccessAt === null || e.at > s.lastSuccessAt) ? { at: e.at, lastError: e.message } : null;
  return {
    ready: s.ready,
    unreachable: t.reachable ? null : { since: t.unreachableSince, lastError: t.lastError, changesWaiting: t.changesWaiting },
    failing,
  };
}

/**
 * The daemon's HTTP endpoints: GET /healthz (200 while the process runs), GET /readyz (200 once the first
 * sync cycle has ended, 503 before and while the target does not answer), GET /metrics (Prometheus text format), POST /webhooks (signed
 * deliveries, when watch.webhookSecret is set; a 404 otherwise), and with `page` the status page at `/`
 * and its `/api/*` (page/page-routes.ts). Anything else is a 404.
 */
export async function startDaemonHttp(o: {
  host: string;
  port: number;
  /** Ready once the first sync cycle has ended; not while the target does not answer (`unreachable` says why). */
  ready: () => {
    ready: boolean;
    unreachable: { since: string | null; lastError: string | null; changesWaiting: number } | null;
    /** The last sync failed (a full disk, say) and none has ended well since. */
    failing?: { at: string; lastError: string } | null;
  };
  metrics: Registry;
  webhooks?: WebhookHandler | null;
  page?: DaemonPage | null;
}): Promise<DaemonHttp> {
  const probes = new Set(['/healthz', '/readyz', '/metrics', '/webhooks']);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (path === '/webhooks' && req.method === 'POST') {
      const handler = o.webhooks;
      if (handler === undefined || handler === null) {
        req.resume();
        return send(404, 'application/json', '{"error":"webhooks_not_configured","hint":"set watch.webhookSecret"}\n');
      }
      readBody(req, MAX_WEBHOOK_BODY_BYTES).then(
        (body) => {
          if (body === null) return send(413, 'application/json', '{"error":"body_too_large"}\n');
          const answer = handler(req.headers, body);
          send(answer.status, 'application/json', `${JSON.stringify(answer.body)}\n`);
        },
        (err: unknown) => send(500, 'application/json', `${JSON.stringify({ error: 'internal', message: String(err) })}\n`),
      );
      return;
    }
    if (!probes.has(path) && o.page?.handle(req, res, path) === true) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'application/json', '{"error":"method_not_allowed"}\n');
    if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}\n');
    if (path === '/readyz') {
      const r = o.ready();
      if (r.unreachable !== null)
        return send(503, 'application/json', `${JSON.stringify({ status: 'target unreachable', ...r.unreachable })}\n`);
      if (r.failing != null) return send(503, 'application/json', `${JSON.stringify({ status: 'last sync failed', ...r.failing })}\n`);
      return r.ready
        ? send(200, 'application/json', '{"status":"ready"}\n')
        : send(503, 'application/json', '{"status":"starting","waitingFor":"the first sync"}\n');
    }
    if (path === '/metrics') {
      o.metrics.metrics().then(
        (text) => send(200, o.metrics.contentType, text),
        (err: unknown) => send(500, 'text/plain', `metrics failed: ${String(err)}\n`),
      );
      return;
    }
    send(404, 'application/json', '{"error":"not_found"}\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new KbsyncError('usage', `--http ${o.host}:${o.port}: cannot listen (${err.code ?? err.message})`, { cause: err })),
    );
    server.listen(o.port, o.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    address: `${host}:${addr.port}`,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        o.page?.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The request body, or null once it passes `maxBytes` (the rest is read and dropped, so that the answer can still be sent). */
async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
  }
  return size > maxBytes ? null : Buffer.concat(chunks);
}
