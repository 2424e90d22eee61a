import type { Dispatcher } from 'undici';
import type { Dialect } from '../config/schema.js';
import type { Logger } from '../shared/logger.js';
import type { WebhookEventKind } from '../shared/webhooks.js';
import type { DatasetMethods } from './datasets.js';
import type { FileMethods } from './files.js';
import type { AgentMethods } from './agents.js';
import type { IntelligenceMethods } from './intelligence.js';
import type { AgentDatasetMethods } from './agent-datasets.js';
import type { WebhookMethods } from './webhooks.js';

/** The client's public types: options, the method table, and the normalised response shapes. */

export type { Dialect };

export type ClientTimeouts = {
  /** Time to open the TCP/TLS connection. @default 10000 */
  connectMs?: number;
  /** Time from the request being sent to the response headers. @default 30000 */
  headersMs?: number;
  /** Longest quiet gap while reading the response body. @default 60000 */
  bodyMs?: number;
};

export type RetryOptions = {
  /** Retries after the first attempt, for free idempotent calls only. @default 3 */
  retries?: number;
  /** First backoff step; the n-th retry waits up to base * 2^n. @default 500 */
  baseDelayMs?: number;
  /** Cap of one backoff wait. @default 30000 */
  maxDelayMs?: number;
  /**
   * Longest Retry-After (429) waited for; a longer one is not waited for but surfaced as rate_limited
   * with its retryAfterMs, and no request to that endpoint is sent while it lasts. @default 60000
   */
  maxRetryAfterMs?: number;
  /** Source of jitter in [0, 1). @default Math.random */
  random?: () => number;
};

export type Clock = {
  /** Milliseconds since the epoch (used for Retry-After dates). */
  now(): number;
  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void>;
};

export type ClientOptions = {
  baseUrl: string;
  apiKey: string;
  /** Sent as `dataset_id` on every call when set (needed with global keys). */
  datasetId?: string;
  dialect?: Partial<Dialect>;
  timeouts?: ClientTimeouts;
  retry?: RetryOptions;
  /** A dispatcher to use instead of the client's own Agent (tests: MockAgent). Not closed by close(). */
  dispatcher?: Dispatcher;
  logger?: Logger;
  /** Time source and sleep (tests). @default Date.now and setTimeout */
  clock?: Partial<Clock>;
};

/** Options of a paid call: the Idempotency-Key to send (a fresh UUID when absent). */
export type PaidOpts = { idempotencyKey?: string };

export type DatasetMode = 'read_only' | 'self_learning';
export type WebhookEvent = WebhookEventKind;

export type DatasetInfo = {
  id: string;
  name: string | null;
  description: string | null;
  plan: string | null;
  creditsRemaining: number | null;
  knowledgeSourceCount: number | null;
};

/** Where a result's chunk came from (the local service's `origin`; absent from the hosted service's results). */
export type ResultOrigin = { heading: string | null; firstRow: number | null; lastRow: number | null };

export type QueryResult = { text: string; score: number; knowledgeSourceId: string; chunkIndex: number; origin?: ResultOrigin };

export type RemoteFile = {
  id: string;
  name: string;
  size: number | null;
  sha256: string | null;
  status: string;
  chunkCount: number | null;
  error: string | null;
  createdAt: string | null;
  updatedAt: string | null;
};

export type UploadResult = {
  id: string;
  name: string;
  size: number | null;
  sha256: string | null;
  status: string;
  creditsCharged: number | null;
};

export type Agent = {
  id: string;
  name: string | null;
  config: Record<string, unknown>;
  createdAt: string | null;
  /** Only in `getAgent`'s answer; null elsewhere. */
  datasets: { id: string; mode: DatasetMode }[] | null;
};

export type IntelligenceWrite = {
  id: string;
  sha256: string | null;
  status: string;
  duplicate: boolean;
  creditsCharged: number | null;
};

export type IntelligenceEntry = {
  id: string;
  title: string | null;
  sha256: string | null;
  status: string;
  createdAt: string | null;
};

export type IntelligenceInput = { content: string; title?: string; metadata?: Record<string, unknown> };

export type Webhook = { id: string; url: string; events: string[]; createdAt: string | null };

export type Page = { limit?: number; offset?: number };

/** The client: every endpoint's method, declared beside its implementation (one module per group). */
export interface KnowledgeClient
  extends DatasetMethods, FileMethods, AgentMethods, IntelligenceMethods, AgentDatasetMethods, WebhookMethods {
  /** Closes the client's own connection pool (an injected dispatcher is left open). */
  close(): Promise<void>;
}
