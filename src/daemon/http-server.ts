import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { KbsyncError } from '../shared/errors.js';

/** `--http HOST:PORT` parsed; the port may be 0 (any free port). */
export function parseListenAddress(value: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = m === null ? NaN : Number(m[2]);
  if (m === null || port > 65535) throw new KbsyncError('usage', `--http: HOST:PORT (for example 127.0.0.1:9464), got "${value}"`);
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}

export type DaemonHttp = { address: string; close(): Promise<void> };

/**
 * The daemon's HTTP endpoints: GET /healthz (200 while the process runs), GET /readyz (200 once the first
 * sync cycle has ended, 503 before), GET /metrics (Prometheus text format). Anything else is a 404.
 */
export async function startDaemonHttp(o: { host: string; port: number; ready: () => boolean; metrics: Registry }): Promise<DaemonHttp> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'application/json', '{"error":"method_not_allowed"}\n');
    if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}\n');
    if (path === '/readyz') {
      return o.ready() ? send(200, 'application/json', '{"status":"ready"}\n') : send(503, 'application/json', '{"status":"starting","waitingFor":"the first sync"}\n');
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
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
