import { request as httpRequest } from 'node:http';
import { spawnKbsync, type KbsyncChild } from './kbsync-child.js';
import type { Workspace } from './e2e-workspace.js';
import { untilDaemonReady } from './daemon-children.js';

/** One HTTP answer of a daemon, as raw as it came (any Host header may be sent). */
export type RawReply = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** Sends one request to 127.0.0.1:port with exactly these headers (the Host header too, when given). */
export function rawRequest(
  port: number,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string; firstChunkOnly?: boolean } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: o.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        // A stream (/api/events) never ends by itself: its first events are enough.
        if (o.firstChunkOnly === true && body.includes('event: regions')) {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
          res.destroy();
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Starts `kbsync watch --http HOST:PORT` on the workspace and waits for its first sync. */
export async function startPageDaemon(ws: Workspace, http: string, env: Record<string, string> = {}): Promise<KbsyncChild> {
  const k = spawnKbsync(['watch', '-c', ws.configPath, '--http', http], ws.root, env);
  await untilDaemonReady(k, `${ws.statePath}.watch.json`, 60_000);
  return k;
}

/** The credits spent today, as GET /api/status (the document of `kbsync status --json`) says. */
export async function creditsToday(port: number, headers: Record<string, string> = {}): Promise<number> {
  const r = await rawRequest(port, '/api/status', { headers: { host: `127.0.0.1:${port}`, ...headers } });
  if (r.status !== 200) throw new Error(`GET /api/status: ${r.status} ${r.body}`);
  return (JSON.parse(r.body) as { credits: { day: number } }).credits.day;
}
