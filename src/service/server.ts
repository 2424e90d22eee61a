import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { silentLogger, type Logger } from '../shared/logger.js';
import { maxFileBytesFor, type Plan } from '../shared/plans.js';
import { createAdmin, type ServiceAdmin } from './admin.js';
import { buildApp, type App } from './http/app.js';
import type { ServiceContext } from './http/context.js';
import type { ServedRoute } from './http/route-table.js';
import { IDEMPOTENCY_TTL_MS } from './http/idempotency.js';
import { loadZod } from './http/request.js';
import type { IngestLimits } from './ingest/ingest-pool.js';
import { createProcessingWorker } from './ingest/worker.js';
import { hashedEmbedder } from './search/embedder.js';
import { openAiEmbedder, type OpenAiEmbedderOptions } from './search/openai-embedder.js';
import { openServiceDb } from './store/db.js';
import { startCheckpointer, type Checkpointer } from './store/checkpointer.js';
import { resetIdempotency } from './store/idempotency.js';
import { instanceAlive, newInstanceId } from './store/owners.js';
import { intelligenceEventData } from './worker-events.js';
import { createDispatcher } from './webhooks/index.js';
import { SERVICE_DB_FILE } from '../shared/service-db.js';

export type { ServiceAdmin };

export type ServiceOptions = {
  /** Holds `service.db` and `files/`. Created (0700) when missing. */
  dataDir: string;
  /** @default "127.0.0.1" */
  host?: string;
  /** 0 picks a free port. @default 8787 */
  port?: number;
  /** Allow `http://127.0.0.1` / `http://localhost` webhook URLs. @default false */
  allowInsecureWebhooks?: boolean;
  /** Requests per minute per API key; unset means no limit. */
  rateLimitPerMin?: number;
  /** An OpenAI-compatible chat-completions URL for agent chat answers. */
  llmUrl?: string;
  /** An OpenAI-compatible embeddings provider for hybrid search; without it, the built-in hashed vectors. */
  embeddings?: OpenAiEmbedderOptions;
  logger?: Logger;
  /** Per-plan upload size limits overriding docs/api.md's (team and enterprise are not stated there). */
  maxFileBytes?: Partial<Record<Plan, number>>;
  /** Milliseconds since the epoch. @default Date.now */
  clock?: () => number;
  /** The parsing workers and each file's time and memory limits (docs/service.md). */
  ingest?: IngestLimits;
  /**
   * False: no processing worker and no webhook sender; queued files and due deliveries wait for another
   * service on the data folder (a running daemon's) or the next start. For a command that uploads nothing.
   * @default true
   */
  background?: boolean;
};

export type RunningService = {
  url: string;
  port: number;
  close(): Promise<void>;
  admin: ServiceAdmin;
  /** The routes it serves (method, path pattern), as the router has them; aliases (`/api/platform/ext`) are not listed. */
  routes: ServedRoute[];
};

/** Listens on `host:port`; a failure (EADDRINUSE, EACCES...) rejects with node's own error. */
function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops listening and ends every connection at once, requests in flight included (their clients see the connection close). */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * This instance's folder of uploads still streaming, `<tmp>/<instance>`, made empty. The folders of
 * services that no longer run, and entries of no instance, are removed: uploads that were streaming
 * when their server stopped were never recorded. A running service's folder is left alone.
 */
function makeTempFolder(tmpRoot: string, instance: string): string {
  mkdirSync(tmpRoot, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(tmpRoot)) if (!instanceAlive(name)) rmSync(join(tmpRoot, name), { recursive: true, force: true });
  const mine = join(tmpRoot, instance);
  mkdirSync(mine, { mode: 0o700 });
  return mine;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Starts the local knowledge service over HTTP on `host:port`, with its processing worker and webhook sender. */
export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const logger = opts.logger ?? silentLogger();
  const clock = opts.clock ?? Date.now;
  const host = opts.host ?? '127.0.0.1';
  const dataDir = resolve(opts.dataDir);
  const filesDir = join(dataDir, 'files');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(filesDir, { recursive: true, mode: 0o700 });
  // Other services may run on this data folder (the embedded target: one in each kbsync process).
  const instance = newInstanceId();
  const background = opts.background !== false;
  const tmpDir = makeTempFolder(join(filesDir, 'tmp'), instance);

  const db = openServiceDb(join(dataDir, SERVICE_DB_FILE), instance);
  const webhooks = createDispatcher({ db, logger, allowInsecure: opts.allowInsecureWebhooks ?? false, now: clock });
  const worker = createProcessingWorker({
    db,
    logger,
    onIntelligenceEvent: (kind, entry) => webhooks.emit(entry.datasetId, kind, intelligenceEventData(kind, entry)),
    ...(opts.ingest === undefined ? {} : { limits: opts.ingest }),
  });
  const ctx: ServiceContext = {
    db,
    logger,
    clock,
    filesDir,
    tmpDir,
    allowInsecureWebhooks: opts.allowInsecureWebhooks ?? false,
    llmUrl: opts.llmUrl,
    embedder: opts.embeddings === undefined ? hashedEmbedder : openAiEmbedder(opts.embeddings),
    maxFileBytes: (plan) => opts.maxFileBytes?.[plan] ?? maxFileBytesFor(plan),
    kickWorker: () => {
      if (background) worker.kick();
    },
    webhooks,
  };
  let built: App | undefined;
  try {
    // Nothing runs before start-up: a request left `in_progress` was interrupted (the worker re-queues files itself).
    resetIdempotency(db, clock() - IDEMPOTENCY_TTL_MS);
    built = buildApp(ctx, { rateLimitPerMin: opts.rateLimitPerMin });
    await listen(built.server, host, opts.port ?? 8787);
  } catch (err) {
    await webhooks.stop();
    db.close();
    rmSync(tmpDir, { recursive: true, force: true });
    throw err;
  }
  // The background parts start on the next turn, once the caller has its running service (and
  // `kbsync serve` has printed `listening`): WAL checkpoints off the event loop (on a busy disk one
  // held requests up for most of a second) in a thread of their own, whose start costs CPU the start-up
  // need not wait for; the processing worker; the webhook sender. A request that comes first is
  // served: it only queues work (and kicks a worker that picks it up once started).
  let checkpointer: Checkpointer | undefined;
  const starting = setImmediate(() => {
    checkpointer = startCheckpointer(db);
    if (background) {
      worker.start();
      webhooks.start();
    }
    // zod, for the first request with a body (loading it is not part of the start: http/request.ts).
    void loadZod();
  });

  const { server } = built;
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost(host)}:${port}`,
    port,
    admin: createAdmin(db, clock),
    routes: built.routes(),
    close: () => {
      closing ??= (async () => {
        clearImmediate(starting);
        await closeServer(server);
        await worker.stop();
        await webhooks.stop();
        await checkpointer?.stop();
        db.close();
        rmSync(tmpDir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
