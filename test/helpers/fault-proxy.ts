import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';

/**
 * A request as the proxy received it (body fully read: the tests send small files); `receivedAtMs` is
 * when its headers arrived (performance.now()), before the body was read.
 */
export type ProxiedRequest = { method: string; url: string; headers: Record<string, string>; body: Buffer; receivedAtMs: number };
/** The upstream's answer to a forwarded request. */
export type UpstreamResponse = { status: number; headers: Record<string, string>; body: Buffer };

/** What to do with a request: pass it on, answer it here, or cut the connection without forwarding. */
export type RequestDecision =
  { kind: 'forward' } | { kind: 'respond'; status: number; json: unknown; headers?: Record<string, string> } | { kind: 'drop' };
/** What to do with the upstream's answer: relay it, or cut the connection (the answer is lost). */
export type ResponseDecision = 'relay' | 'drop';

export type FaultHooks = {
  onRequest?: (req: ProxiedRequest) => RequestDecision | Promise<RequestDecision>;
  onResponse?: (req: ProxiedRequest, res: UpstreamResponse) => ResponseDecision | Promise<ResponseDecision>;
};

/** An HTTP proxy on 127.0.0.1 in front of the service, producing faults a real server cannot produce on demand. */
export type FaultProxy = {
  url: string;
  /** Replaces the hooks (pass {} to forward everything). */
  setHooks(hooks: FaultHooks): void;
  /** Every request seen, in arrival order. */
  requests: ProxiedRequest[];
  close(): Promise<void>;
};

const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'proxy-connection', 'upgrade']);

/** Starts a proxy forwarding to `upstream` (e.g. the service's URL). */
export async function startFaultProxy(upstream: string, initial: FaultHooks = {}): Promise<FaultProxy> {
  let hooks = initial;
  const requests: ProxiedRequest[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const receivedAtMs = performance.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const proxied: ProxiedRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: headersOf(req.headers),
      body: Buffer.concat(chunks),
      receivedAtMs,
    };
    requests.push(proxied);
    const decision = (await hooks.onRequest?.(proxied)) ?? { kind: 'forward' };
    if (decision.kind === 'drop') {
      res.socket?.destroy();
      return;
    }
    if (decision.kind === 'respond') {
      res.writeHead(decision.status, { 'content-type': 'application/json', ...decision.headers }).end(JSON.stringify(decision.json));
      return;
    }
    const up = await request(`${upstream}${proxied.url}`, {
      method: proxied.method as 'GET',
      headers: proxied.headers,
      body: proxied.body.length > 0 ? proxied.body : undefined,
    });
    const answer: UpstreamResponse = {
      status: up.statusCode,
      headers: headersOf(up.headers),
      body: Buffer.from(await up.body.arrayBuffer()),
    };
    if ((await hooks.onResponse?.(proxied, answer)) === 'drop') {
      res.socket?.destroy();
      return;
    }
    res.writeHead(answer.status, answer.headers).end(answer.body);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.socket?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setHooks: (next) => {
      hooks = next;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** True for the paid upload call. */
export function isUpload(req: ProxiedRequest): boolean {
  return req.method === 'POST' && req.url.split('?')[0]?.endsWith('/files/upload') === true;
}

function headersOf(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined || HOP_BY_HOP.has(key.toLowerCase())) continue;
    out[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
