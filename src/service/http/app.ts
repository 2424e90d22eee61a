import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import multipart from '@fastify/multipart';
import { ServiceError } from '../service-error.js';
import { addAuthHook } from './auth.js';
import type { ServiceContext } from './context.js';
import { toErrorResponse, wrongContentType } from './errors.js';
import { JSON_BODY_LIMIT } from './limits.js';
import { createRouteTable, type ServedRoute } from './route-table.js';
import { createRateLimiter } from './rate-limit.js';
import { registerAgentDatasetRoutes } from './routes/agent-datasets.js';
import { registerAgentRoutes } from './routes/agents.js';
import { registerDatasetRoutes } from './routes/datasets.js';
import { registerFileRoutes } from './routes/files.js';
import { registerIntelligenceRoutes } from './routes/intelligence.js';
import { routedUrl } from './routes/paths.js';
import { registerWebhookRoutes } from './routes/webhooks.js';

/** JSON.parse reviver refusing `__proto__` keys (as fastify's own parser does), so no parsed object can carry one. */
function rejectProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new ServiceError('invalid_request', 'a "__proto__" key is not allowed in JSON bodies');
  return value;
}

function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

/**
 * Route schemas are not used (bodies are parsed with zod: request.ts). Naming these compilers keeps
 * fastify from loading ajv and fast-json-stringify, ~40 ms of every start; a route that declares a
 * schema fails at registration instead of being validated by nothing.
 */
const NO_SCHEMA_COMPILERS = {
  buildValidator: () => () => {
    throw new Error('fastify route schemas are not used here: parse the body with parseBody (http/request.ts)');
  },
  buildSerializer: () => () => {
    throw new Error("fastify response schemas are not used here: replies are JSON.stringify'd");
  },
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body type the route reads, named in a wrong Content-Type's 400. @default "application/json" */
    accepts?: 'multipart/form-data';
  }
}

/**
 * The service's HTTP app: every endpoint of docs/api.md, JSON errors for everything, auth and rate
 * limit; and the routes it serves, as fastify registered them.
 */
export async function buildApp(
  ctx: ServiceContext,
  opts: { rateLimitPerMin?: number | undefined },
): Promise<{ app: FastifyInstance; routes: () => ServedRoute[] }> {
  // No logger for fastify itself: given one, it loads pino and makes the (lazy) service logger at
  // every start, ~15 ms. The service logs what it must through ctx.logger (a 5xx: the error handler).
  const app = Fastify({
    bodyLimit: JSON_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: true,
    // `/api/platform/ext/...` is routed as `/api/v1/ext/...` (same handler, auth and idempotency: not a redirect).
    rewriteUrl: (req) => routedUrl(req.url ?? '/'),
    schemaController: { compilersFactory: NO_SCHEMA_COMPILERS },
    frameworkErrors: (err, _req, reply) => {
      void (reply as FastifyReply).code(400).send(errorBody('invalid_request', err.message));
    },
  });

  // JSON: an empty body is no body (POSTs like reindex need none); malformed JSON is a 400.
  // Only JSON and multipart are spoken: text/plain (a fastify default) gets a 400 naming the
  // expected type, like any other type (415 is docs/api.md's `unsupported_file_type`).
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (req.routeOptions.config?.accepts === 'multipart/form-data') {
      done(
        new ServiceError('invalid_request', wrongContentType({ expects: 'multipart/form-data', contentType: req.headers['content-type'] })),
        undefined,
      );
      return;
    }
    const text = String(body);
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text, rejectProtoKeys);
    } catch (err) {
      done(err instanceof ServiceError ? err : new ServiceError('invalid_request', 'malformed JSON body'), undefined);
      return;
    }
    done(null, parsed);
  });
  await app.register(multipart);

  app.setErrorHandler((err, req, reply) => {
    const contentType = req.headers['content-type'];
    const { status, headers, body } = toErrorResponse(err, {
      expects: req.routeOptions.config?.accepts ?? 'application/json',
      contentType,
    });
    if (status >= 500) ctx.logger.error({ err, method: req.method, route: req.routeOptions.url }, 'request failed');
    // A body we did not read (refused upload) is not drained: close the connection after answering.
    if (!req.raw.complete) void reply.header('connection', 'close');
    return reply.code(status).headers(headers).send(body);
  });
  const table = createRouteTable();
  app.addHook('onRoute', (route) => {
    table.add(route.url, Array.isArray(route.method) ? route.method : [route.method]);
  });
  app.setNotFoundHandler((req, reply) => {
    const wrongMethod = table.methodNotAllowed(req.method, req.url);
    if (wrongMethod !== null) {
      const { status, headers, body } = toErrorResponse(wrongMethod);
      return reply.code(status).headers(headers).send(body);
    }
    // The path as the client sent it (an alias path is not shown as its /api/v1 form).
    const path = req.originalUrl.split('?')[0] ?? '';
    return reply.code(404).send(errorBody('not_found', `no route ${req.method} ${path.slice(0, 200)}`));
  });
  addAuthHook(app, ctx, opts.rateLimitPerMin === undefined ? null : createRateLimiter(opts.rateLimitPerMin, ctx.clock));

  registerDatasetRoutes(app, ctx);
  registerFileRoutes(app, ctx);
  registerAgentRoutes(app, ctx);
  registerIntelligenceRoutes(app, ctx);
  registerAgentDatasetRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  return { app, routes: table.routes };
}
