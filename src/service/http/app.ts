import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ServiceError } from '../service-error.js';
import { authenticate } from './auth.js';
import type { ServiceContext } from './context.js';
import { toErrorResponse, wrongContentType } from './errors.js';
import { JSON_BODY_LIMIT } from './limits.js';
import { createRouteTable, type ServedRoute } from './route-table.js';
import { createRateLimiter } from './rate-limit.js';
import { Reply, type BodyType, type Handler, type Routes } from './routing.js';
import { registerAgentDatasetRoutes } from './routes/agent-datasets.js';
import { registerAgentRoutes } from './routes/agents.js';
import { registerDatasetRoutes } from './routes/datasets.js';
import { registerFileRoutes } from './routes/files.js';
import { registerIntelligenceRoutes } from './routes/intelligence.js';
import { routedUrl } from './routes/paths.js';
import { registerWebhookRoutes } from './routes/webhooks.js';

// The CommonJS module itself: an ES import of node:http reads every export, and its lazy WebSocket
// getters load Node's bundled undici, a cost of every start (`bench/service-start.ts`).
const { createServer } = process.getBuiltinModule('node:http');

/** How long an idle keep-alive connection stays open: longer than clients' own idle timeouts (undici's 4 s), so a client never sends on a connection the server is closing. */
const KEEP_ALIVE_MS = 72_000;
/** Methods whose body is read (as JSON unless the route takes an upload); a GET's body is ignored. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A route as the router stores it: its path pattern (for the log), handler and body type. */
type Route = { path: string; handler: Handler; accepts: BodyType };

function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

/** JSON.parse reviver refusing `__proto__` keys, so no parsed object can carry one. */
function rejectProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new ServiceError('invalid_request', 'a "__proto__" key is not allowed in JSON bodies');
  return value;
}

const bodyTooLarge = () => new ServiceError('invalid_request', `JSON body over ${JSON_BODY_LIMIT} bytes`);

/**
 * A JSON route's body: none (undefined) when the request has no body, or an empty one; else it
 * must say `application/json`, fit JSON_BODY_LIMIT and parse. A body over the limit is read past
 * (not buffered), so that the answer reaches the client.
 */
function readJsonBody(raw: IncomingMessage): Promise<unknown> {
  const contentType = raw.headers['content-type'];
  const length = raw.headers['content-length'];
  if (contentType === undefined && !hasBody(raw)) return Promise.resolve(undefined);
  if (contentType === undefined || !/^application\/json\s*(;|$)/i.test(contentType))
    return Promise.reject(new ServiceError('invalid_request', wrongContentType({ expects: 'application/json', contentType })));
  if (Number(length) > JSON_BODY_LIMIT) return Promise.reject(bodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err: ServiceError) => {
      raw.off('data', onData).off('end', onEnd).off('error', onError);
      raw.resume();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > JSON_BODY_LIMIT) stop(bodyTooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') {
        resolve(undefined);
        return;
      }
      try {
        resolve(JSON.parse(text, rejectProtoKeys));
      } catch (err) {
        reject(err instanceof ServiceError ? err : new ServiceError('invalid_request', 'malformed JSON body'));
      }
    };
    const onError = (err: Error) => stop(new ServiceError('invalid_request', 'the request body was interrupted', { cause: err }));
    raw.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** A request target as a path and query: the absolute form (`GET http://host/path`, which proxies send) too. */
function originForm(target: string): string {
  if (target.startsWith('/')) return target;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return target;
  }
}

/** The query string's parameters; one given more than once is an array of its values. */
function queryOf(url: string): Record<string, string | string[]> {
  const at = url.indexOf('?');
  const query: Record<string, string | string[]> = {};
  if (at < 0) return query;
  for (const [key, value] of new URLSearchParams(url.slice(at + 1))) {
    const seen = query[key];
    query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return query;
}

/** True when the request says it has a body (a length above 0, or chunks). */
function hasBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * After an answer to a request whose body was not read to its end (a refused upload): how much more
 * of it is read and dropped, and for how long, before its connection is closed. Closed at once with
 * bytes unread, the connection is reset, and a client still sending (undici: EPIPE) could lose the
 * answer (a 413, say). A body that ends sooner leaves it open.
 */
const LINGER_BYTES = 8 << 20;
const LINGER_MS = 2_000;

function lingerThenClose(raw: IncomingMessage): void {
  let left = LINGER_BYTES;
  const close = (): void => {
    clearTimeout(timer);
    raw.socket?.destroy();
  };
  // The open socket holds the process, not this timer: a service closing meanwhile does not wait for it.
  const timer = setTimeout(close, LINGER_MS).unref();
  raw.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left <= 0) close();
  });
  raw.once('end', () => clearTimeout(timer));
  raw.resume();
}

/** Writes a JSON answer (no body for HEAD: node leaves it out); then, if the request's body was left unread, lingers before closing. */
function send(
  raw: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body) ?? '';
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(payload)),
  });
  res.end(payload);
  // (A request without a body may not be marked complete yet when it is answered at once.)
  if (!raw.complete && hasBody(raw)) lingerThenClose(raw);
}

/** A request node's parser refused (malformed, headers too large...): a JSON 400, then the connection ends. */
function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // Bytes after a request that asked to close: the answers still due go out, then node closes the connection.
  if (err.code === 'HPE_CLOSED_CONNECTION') return;
  // An answer half written: a 400 now would land inside it (node's own handler writes none then either).
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const payload = JSON.stringify(
    errorBody('invalid_request', err.code === 'HPE_HEADER_OVERFLOW' ? 'request headers too large' : 'malformed HTTP request'),
  );
  socket.end(
    `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n${payload}`,
  );
}

export type App = { server: Server; routes: () => ServedRoute[] };

/**
 * The service's HTTP app: every endpoint of docs/api.md on node:http and its own route table, JSON
 * errors for everything, auth and rate limit. Not fastify: its load was a large share of every
 * `kbsync serve` start, for hooks and plugins the service had replaced with its own policies (docs/architecture.md,
 * "The service's start").
 */
export function buildApp(ctx: ServiceContext, opts: { rateLimitPerMin?: number | undefined }): App {
  const table = createRouteTable<Route>();
  const limiter = opts.rateLimitPerMin === undefined ? null : createRateLimiter(opts.rateLimitPerMin, ctx.clock);

  const add = (methods: string[], path: string, handler: Handler, accepts: BodyType = 'application/json') => {
    table.add(path, methods, { path, handler, accepts });
  };
  const routes: Routes = {
    // A GET answers HEAD too, without its body.
    get: (path, handler) => add(['GET', 'HEAD'], path, handler),
    post: (path, handler, options) => add(['POST'], path, handler, options?.accepts),
    put: (path, handler) => add(['PUT'], path, handler),
    patch: (path, handler) => add(['PATCH'], path, handler),
  };
  registerDatasetRoutes(routes, ctx);
  registerFileRoutes(routes, ctx);
  registerAgentRoutes(routes, ctx);
  registerIntelligenceRoutes(routes, ctx);
  registerAgentDatasetRoutes(routes, ctx);
  registerWebhookRoutes(routes, ctx);

  const handle = async (raw: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = raw.method ?? 'GET';
    const originalUrl = originForm(raw.url ?? '/');
    // `/api/platform/ext/...` is routed as `/api/v1/ext/...` (same handler, auth and idempotency: not a redirect).
    const url = routedUrl(originalUrl);
    let route: Route | null = null;
    try {
      const found = table.find(method, url);
      if (found === null) {
        const wrongMethod = table.methodNotAllowed(method, url);
        if (wrongMethod !== null) throw wrongMethod;
        // The path as the client sent it (an alias path is not shown as its /api/v1 form).
        const path = originalUrl.split('?')[0] ?? '';
        throw new ServiceError('not_found', `no route ${method} ${path.slice(0, 200)}`);
      }
      route = found.value;
      const query = queryOf(url);
      const auth = authenticate(ctx, limiter, raw.headers, query);
      const body = route.accepts === 'application/json' && BODY_METHODS.has(method) ? await readJsonBody(raw) : undefined;
      const result = await route.handler({ raw, method, url, headers: raw.headers, params: found.params, query, body, auth });
      if (result instanceof Reply) send(raw, res, result.status, result.body, result.headers);
      else send(raw, res, 200, result);
    } catch (err) {
      const { status, headers, body } = toErrorResponse(err);
      if (status >= 500) ctx.logger.error({ err, method, route: route?.path }, 'request failed');
      send(raw, res, status, body, headers);
    }
  };

  // Pipelined requests of one connection are handled one after another: node emits each as soon as it is
  // parsed, and a GET behind a PUT must see what the PUT wrote (RFC 9112 9.3.2). Answers keep their order.
  const handling = new WeakMap<Socket, Promise<void>>();
  // Uploads may stream for longer than node's default 5-minute request timeout: none (as fastify had it).
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS, requestTimeout: 0 }, (raw, res) => {
    const run = (): Promise<void> =>
      handle(raw, res).catch((err: unknown) => {
        ctx.logger.error({ err }, 'could not answer a request');
        res.destroy();
      });
    const socket = raw.socket;
    const before = handling.get(socket);
    const done = before === undefined ? run() : before.then(run);
    handling.set(socket, done);
    void done.then(() => {
      if (handling.get(socket) === done) handling.delete(socket);
    });
  });
  server.on('clientError', onClientError);
  return { server, routes: table.routes };
}
