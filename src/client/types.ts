import type { Dispatcher } from 'undici';
import type { Dialect } from '../config/schema.js';
import type { Logger } from '../shared/logger.js';
import type { WebhookEventKind } from '../shared/webhooks.js';

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

export interface KnowledgeClient {
  listDatasets(): Promise<{ datasets: DatasetInfo[]; total: number }>;
  getDataset(): Promise<DatasetInfo>;
  updateDataset(body: { name?: string; description?: string }): Promise<DatasetInfo>;
  query(body: { query: string; topK?: number; scoreThreshold?: number }, o?: PaidOpts): Promise<QueryResult[]>;
  queryBatch(body: { queries: string[]; topK?: number }, o?: PaidOpts): Promise<{ query: string; results: QueryResult[] }[]>;
  reindex(o?: PaidOpts): Promise<{ status: string; chunks: number | null }>;
  listFiles(p?: Page): Promise<{ files: RemoteFile[]; total: number }>;
  listAllFiles(): Promise<RemoteFile[]>;
  /**
   * Uploads one file. With `size` (what was hashed and priced), a file of another size is refused with
   * `file_changed` before anything is sent, and exactly that many bytes are sent.
   */
  uploadFile(file: { path: string; name: string; size?: number }, o?: PaidOpts & { signal?: AbortSignal }): Promise<UploadResult>;
  reprocessFile(id: string, o?: PaidOpts): Promise<{ id: string; status: string; creditsCharged: number | null }>;
  listAgents(): Promise<Agent[]>;
  createAgent(b: { name: string; config?: Record<string, unknown> }, o?: PaidOpts): Promise<Agent>;
  getAgent(id: string): Promise<Agent>;
  updateAgentConfig(id: string, config: Record<string, unknown>, o?: PaidOpts): Promise<Agent>;
  chat(agentId: string, message: string, o?: PaidOpts): Promise<{ response: string; sources: QueryResult[] }>;
  writeIntelligence(b: { agentId: string } & IntelligenceInput, o?: PaidOpts): Promise<IntelligenceWrite>;
  writeIntelligenceBatch(
    b: { agentId: string; entries: IntelligenceInput[] },
    o?: PaidOpts,
  ): Promise<{ results: IntelligenceWrite[]; created: number; duplicates: number; creditsCharged: number }>;
  listIntelligence(p?: Page): Promise<{ entries: IntelligenceEntry[]; total: number }>;
  listAgentDatasets(agentId: string): Promise<{ id: string; name: string | null; mode: DatasetMode }[]>;
  attachDataset(agentId: string, b: { datasetId: string; mode?: DatasetMode }): Promise<{ id: string; mode: DatasetMode }>;
  setDatasetMode(agentId: string, datasetId: string, mode: DatasetMode): Promise<{ id: string; mode: DatasetMode }>;
  createWebhook(b: { url: string; events?: WebhookEvent[] }): Promise<Webhook & { secret: string }>;
  listWebhooks(): Promise<Webhook[]>;
  testWebhook(id: string): Promise<{ delivered: boolean; status: number | null }>;
  /** Closes the client's own connection pool (an injected dispatcher is left open). */
  close(): Promise<void>;
}
