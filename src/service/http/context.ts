import type { Database } from 'better-sqlite3';
import type { Logger } from '../../shared/logger.js';
import type { Plan } from '../../shared/plans.js';
import type { WebhookDispatcher } from '../webhooks/index.js';
import type { Embedder } from '../search/embedder.js';

/** Everything a route needs, built once at start-up and passed down (no module-level state). */
export type ServiceContext = {
  db: Database;
  logger: Logger;
  /** Milliseconds since the epoch (tests may move it). */
  clock: () => number;
  /** Folder of stored uploads. */
  filesDir: string;
  /** This service's folder of uploads still streaming (its own: other services may share the data folder). */
  tmpDir: string;
  allowInsecureWebhooks: boolean;
  llmUrl: string | undefined;
  /** Makes the vectors of hybrid search: the built-in hashed n-grams, or a configured provider. */
  embedder: Embedder;
  maxFileBytes: (plan: Plan) => number;
  /** Wakes the processing worker after new work was queued. */
  kickWorker: () => void;
  /** Queues and sends webhook events (service-webhooks). */
  webhooks: WebhookDispatcher;
};
