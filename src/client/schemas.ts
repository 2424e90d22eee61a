import * as z from 'zod';

/**
 * Response bodies as the client reads them: only the fields it uses, lenient where the hosted
 * service is unknown (ids numeric or string, `text ?? content`, optional fields null), extra
 * fields ignored. Each schema outputs the client's camelCase shape.
 */

/** An id on the wire: a positive integer (hosted, local) or a string; always a string here. */
export const Id = z.union([z.number().int(), z.string().min(1)]).transform(String);

/** An id as the wire expects it: a decimal string that fits a safe integer goes as a number. */
export function wireId(id: string): number | string {
  return /^[1-9]\d{0,15}$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : id;
}

/** Optional on the wire, null when absent. */
function opt<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => v ?? null);
}

const Count = z.number().int().nonnegative();
const Mode = z.enum(['read_only', 'self_learning']);

/** A list that may come bare or wrapped in `{ [key]: [...] }`. */
export function listOf<T extends z.ZodType>(key: string, item: T) {
  return z.union([z.array(item), z.object({ [key]: z.array(item) }).transform((o) => o[key] as z.output<T>[])]);
}

export const DatasetInfo = z
  .object({
    id: Id,
    name: opt(z.string()),
    description: opt(z.string()),
    plan: opt(z.string()),
    credits_remaining: opt(z.number()),
    knowledge_source_count: opt(Count),
  })
  .transform((d) => ({
    id: d.id,
    name: d.name,
    description: d.description,
    plan: d.plan,
    creditsRemaining: d.credits_remaining,
    knowledgeSourceCount: d.knowledge_source_count,
  }));

export const DatasetList = z
  .object({ datasets: z.array(DatasetInfo), total: Count.optional() })
  .transform((o) => ({ datasets: o.datasets, total: o.total ?? o.datasets.length }));

/** `PUT /datasets` answers the dataset, bare or as `{ dataset }`. */
export const DatasetUpdated = z.union([DatasetInfo, z.object({ dataset: DatasetInfo }).transform((o) => o.dataset)]);

/** `origin` of a query result: the local service's extension (docs/api.md); the hosted service sends none. */
const ResultOrigin = z
  .object({ heading: z.string().nullable().optional(), first_row: Count.nullable().optional(), last_row: Count.nullable().optional() })
  .transform((o) => ({ heading: o.heading ?? null, firstRow: o.first_row ?? null, lastRow: o.last_row ?? null }));

export const QueryResult = z
  .object({
    text: z.string().optional(),
    content: z.string().optional(),
    score: z.number(),
    knowledge_source_id: Id,
    chunk_index: Count,
    origin: opt(ResultOrigin),
  })
  .refine((r) => r.text !== undefined || r.content !== undefined, { message: 'needs "text" or "content"' })
  .transform((r) => ({
    text: r.text ?? r.content ?? '',
    score: r.score,
    knowledgeSourceId: r.knowledge_source_id,
    chunkIndex: r.chunk_index,
    ...(r.origin === null ? {} : { origin: r.origin }),
  }));

export const QueryResults = z.object({ results: z.array(QueryResult) }).transform((o) => o.results);

export const BatchQueryResults = z
  .object({ results: z.array(z.object({ query: z.string(), results: z.array(QueryResult) })) })
  .transform((o) => o.results);

export const Reindex = z.object({ status: z.string(), chunks: opt(Count) });

/**
 * A listed file. Its optional fields are made null in the one transform, not one transform each: a
 * listing of a million files goes through this schema, and each transform costs zod objects per field.
 */
export const RemoteFile = z
  .object({
    id: z.union([z.number().int(), z.string().min(1)]),
    name: z.string(),
    size: Count.nullish(),
    sha256: z.string().nullish(),
    status: z.string(),
    chunk_count: Count.nullish(),
    error: z.string().nullish(),
    created_at: z.string().nullish(),
    updated_at: z.string().nullish(),
  })
  .transform((f) => ({
    id: String(f.id),
    name: f.name,
    size: f.size ?? null,
    sha256: f.sha256 ?? null,
    status: f.status,
    chunkCount: f.chunk_count ?? null,
    error: f.error ?? null,
    createdAt: f.created_at ?? null,
    updatedAt: f.updated_at ?? null,
  }));

/** `total` may be missing on an unknown server: null then, and listAllFiles pages until a page is empty. */
export const FileList = z.object({ files: z.array(RemoteFile), total: opt(Count) });

export const UploadResult = z
  .object({ id: Id, name: z.string(), size: opt(Count), sha256: opt(z.string()), status: z.string(), credits_charged: opt(z.number()) })
  .transform((u) => ({ id: u.id, name: u.name, size: u.size, sha256: u.sha256, status: u.status, creditsCharged: u.credits_charged }));

export const Reprocess = z
  .object({ id: Id, status: z.string(), credits_charged: opt(z.number()) })
  .transform((r) => ({ id: r.id, status: r.status, creditsCharged: r.credits_charged }));

export const AgentDatasetRef = z.object({ id: Id, mode: Mode });

export const Agent = z
  .object({
    id: Id,
    name: opt(z.string()),
    config: opt(z.record(z.string(), z.unknown())),
    created_at: opt(z.string()),
    datasets: opt(z.array(AgentDatasetRef)),
  })
  .transform((a) => ({ id: a.id, name: a.name, config: a.config ?? {}, createdAt: a.created_at, datasets: a.datasets }));

export const AgentList = listOf('agents', Agent);

export const Chat = z
  .object({ response: z.string().optional(), answer: z.string().optional(), sources: opt(z.array(QueryResult)) })
  .refine((c) => c.response !== undefined || c.answer !== undefined, { message: 'needs "response"' })
  .transform((c) => ({ response: c.response ?? c.answer ?? '', sources: c.sources ?? [] }));

export const IntelligenceWrite = z
  .object({ id: Id, sha256: opt(z.string()), status: z.string(), duplicate: z.boolean().default(false), credits_charged: opt(z.number()) })
  .transform((w) => ({ id: w.id, sha256: w.sha256, status: w.status, duplicate: w.duplicate, creditsCharged: w.credits_charged }));

export const IntelligenceBatch = z
  .object({ results: z.array(IntelligenceWrite), created: Count, duplicates: Count, credits_charged: z.number() })
  .transform((b) => ({ results: b.results, created: b.created, duplicates: b.duplicates, creditsCharged: b.credits_charged }));

export const IntelligenceEntry = z
  .object({ id: Id, title: opt(z.string()), sha256: opt(z.string()), status: z.string(), created_at: opt(z.string()) })
  .transform((e) => ({ id: e.id, title: e.title, sha256: e.sha256, status: e.status, createdAt: e.created_at }));

export const IntelligenceList = z
  .object({ entries: z.array(IntelligenceEntry), total: Count.optional() })
  .transform((o) => ({ entries: o.entries, total: o.total ?? o.entries.length }));

export const AgentDataset = z.object({ id: Id, name: opt(z.string()), mode: Mode });
export const AgentDatasetList = listOf('datasets', AgentDataset);

export const Webhook = z
  .object({ id: Id, url: z.string(), events: z.array(z.string()).default([]), created_at: opt(z.string()) })
  .transform((w) => ({ id: w.id, url: w.url, events: w.events, createdAt: w.created_at }));

export const WebhookCreated = z
  .object({ id: Id, url: z.string(), events: z.array(z.string()).default([]), secret: z.string().min(1), created_at: opt(z.string()) })
  .transform((w) => ({ id: w.id, url: w.url, events: w.events, secret: w.secret, createdAt: w.created_at }));

export const WebhookList = listOf('webhooks', Webhook);

export const WebhookTest = z.object({ delivered: z.boolean(), status: opt(z.number().int()) });
