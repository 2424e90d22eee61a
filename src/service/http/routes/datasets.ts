import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { requireAdvancedTier } from '../../billing/tiers.js';
import { commitPaid } from '../../billing/charge.js';
import { reindexDataset } from '../../search/reindex.js';
import { ServiceError, notFound } from '../../service-error.js';
import { searchChunks } from '../../store/chunks.js';
import { countKnowledgeSources, getDataset, updateDataset } from '../../store/datasets.js';
import { isoAt } from '../../store/time.js';
import type { ServiceContext } from '../context.js';
import { idempotent } from '../idempotency.js';
import { authOf, parseBody } from '../request.js';
import { datasetJson, hitJson } from '../wire.js';
import { V1, V2 } from './paths.js';

/** docs/api.md: at most 20 results per query, and (chosen) at most 20 queries per batch. */
const MAX_TOP_K = 20;
const MAX_BATCH_QUERIES = 20;

const TopK = z.number().int().min(1).default(5);
const Query = z.object({ query: z.string().min(1).max(10_000), top_k: TopK, score_threshold: z.number().min(0).max(1).optional() });
const QueryBatch = z.object({ queries: z.array(z.string().min(1).max(10_000)).min(1), top_k: TopK, score_threshold: z.number().min(0).max(1).optional() });
// Strict: a mistyped field would otherwise be a silent no-op (docs/service.md).
const DatasetUpdate = z.strictObject({ name: z.string().min(1).max(200).optional(), description: z.string().max(10_000).optional() });

function checkTopK(topK: number): void {
  if (topK > MAX_TOP_K) throw new ServiceError('validation_failed', `top_k: at most ${MAX_TOP_K}`);
}

/** Datasets: list, update, query, batch query, reindex. */
export function registerDatasetRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { db } = ctx;

  const datasetBody = (datasetId: number) => {
    const d = getDataset(db, datasetId);
    if (d === undefined) throw notFound('dataset');
    return datasetJson(d, countKnowledgeSources(db, datasetId));
  };

  app.get(`${V1}/datasets/`, async (req) => {
    return { datasets: [datasetBody(authOf(req).datasetId)], total: 1 };
  });

  app.put(`${V2}/datasets`, async (req) => {
    const { datasetId } = authOf(req);
    const patch = parseBody(DatasetUpdate, req.body);
    updateDataset(db, datasetId, patch);
    return datasetBody(datasetId);
  });

  app.post(`${V1}/datasets/query`, idempotent(ctx, async (req, idem) => {
    const { datasetId } = authOf(req);
    const body = parseBody(Query, req.body);
    checkTopK(body.top_k);
    return commitPaid(db, { datasetId, now: isoAt(ctx.clock()), onCharged: idem?.onCharged }, () => {
      const hits = searchChunks(db, { datasetId, query: body.query, topK: body.top_k, scoreThreshold: body.score_threshold });
      return { op: { kind: 'query' }, ref: null, status: 200, respond: () => ({ results: hits.map(hitJson) }) };
    });
  }));

  app.post(`${V1}/datasets/query/batch`, idempotent(ctx, async (req, idem) => {
    const { datasetId, plan } = authOf(req);
    requireAdvancedTier(plan, 'batch query');
    const body = parseBody(QueryBatch, req.body);
    checkTopK(body.top_k);
    if (body.queries.length > MAX_BATCH_QUERIES) throw new ServiceError('validation_failed', `queries: at most ${MAX_BATCH_QUERIES}`);
    return commitPaid(db, { datasetId, now: isoAt(ctx.clock()), onCharged: idem?.onCharged }, () => {
      const results = body.queries.map((query) => ({
        query,
        results: searchChunks(db, { datasetId, query, topK: body.top_k, scoreThreshold: body.score_threshold }).map(hitJson),
      }));
      return { op: { kind: 'query_batch', queries: body.queries.length }, ref: null, status: 200, respond: () => ({ results }) };
    });
  }));

  app.post(`${V1}/datasets/reindex`, idempotent(ctx, async (req, idem) => {
    const { datasetId, plan } = authOf(req);
    requireAdvancedTier(plan, 'reindex');
    return commitPaid(db, { datasetId, now: isoAt(ctx.clock()), onCharged: idem?.onCharged }, () => {
      const { chunks } = reindexDataset(db, datasetId);
      return { op: { kind: 'reindex' }, ref: null, status: 200, respond: () => ({ status: 'done', chunks }) };
    });
  }));
}
