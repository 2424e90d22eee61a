import type { Routes } from '../routing.js';
import { requireAdvancedTier } from '../../billing/tiers.js';
import { assertBalance, commitPaid } from '../../billing/charge.js';
import { costOf } from '../../../shared/plans.js';
import { isKbsyncError } from '../../../shared/errors.js';
import { searchHybrid, type HybridQuery } from '../../search/hybrid.js';
import { rebuildDatasetVectors, reindexDataset } from '../../search/reindex.js';
import { prepareVectors } from '../../search/retrieve.js';
import { ServiceError, notFound } from '../../service-error.js';
import { countKnowledgeSources, getDataset, updateDataset } from '../../store/datasets.js';
import { isoAt } from '../../store/time.js';
import type { ServiceContext } from '../context.js';
import { idempotent } from '../idempotency.js';
import { lazySchemas, parseBody } from '../request.js';
import { datasetJson, hitJson } from '../wire.js';
import { V1, V2 } from './paths.js';

/** docs/api.md: at most 20 results per query, and (chosen) at most 20 queries per batch. */
const MAX_TOP_K = 20;
const MAX_BATCH_QUERIES = 20;

const schemas = lazySchemas((z) => {
  const TopK = z.number().int().min(1).default(5);
  return {
    Query: z.object({ query: z.string().min(1).max(10_000), top_k: TopK, score_threshold: z.number().min(0).max(1).optional() }),
    QueryBatch: z.object({
      queries: z.array(z.string().min(1).max(10_000)).min(1),
      top_k: TopK,
      score_threshold: z.number().min(0).max(1).optional(),
    }),
    // Strict: a mistyped field would otherwise be a silent no-op (docs/service.md).
    DatasetUpdate: z.strictObject({ name: z.string().min(1).max(200).optional(), description: z.string().max(10_000).optional() }),
  };
});

function checkTopK(topK: number): void {
  if (topK > MAX_TOP_K) throw new ServiceError('validation_failed', `top_k: at most ${MAX_TOP_K}`);
}

/** The embeddings provider's failure is the server's (502), and costs nothing; its message never names the URL or key. */
function providerFailure(err: unknown): never {
  if (isKbsyncError(err, 'embeddings_failed'))
    throw new ServiceError('internal', `embeddings failed: ${err.message}`, { status: 502, cause: err });
  throw err;
}

/** Datasets: list, update, query, batch query, reindex. */
export function registerDatasetRoutes(app: Routes, ctx: ServiceContext): void {
  const { db } = ctx;

  const datasetBody = (datasetId: number) => {
    const d = getDataset(db, datasetId);
    if (d === undefined) throw notFound('dataset');
    return datasetJson(d, countKnowledgeSources(db, datasetId));
  };

  app.get(`${V1}/datasets/`, async (req) => {
    return { datasets: [datasetBody(req.auth.datasetId)], total: 1 };
  });

  app.put(`${V2}/datasets`, async (req) => {
    const { datasetId } = req.auth;
    const patch = parseBody((await schemas()).DatasetUpdate, req.body);
    updateDataset(db, datasetId, patch);
    return datasetBody(datasetId);
  });

  app.post(
    `${V1}/datasets/query`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId } = req.auth;
      const body = parseBody((await schemas()).Query, req.body);
      checkTopK(body.top_k);
      assertBalance(db, datasetId, costOf({ kind: 'query' }));
      const vectors = await prepareVectors(db, datasetId, ctx.embedder, body.query).catch(providerFailure);
      return commitPaid(db, { datasetId, now: isoAt(ctx.clock()), onCharged: idem?.onCharged }, () => {
        const hits = searchHybrid(db, { datasetId, query: body.query, topK: body.top_k, scoreThreshold: body.score_threshold, vectors });
        return { op: { kind: 'query' }, ref: null, status: 200, respond: () => ({ results: hits.map(hitJson) }) };
      });
    }),
  );

  app.post(
    `${V1}/datasets/query/batch`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId, plan } = req.auth;
      requireAdvancedTier(plan, 'batch query');
      const body = parseBody((await schemas()).QueryBatch, req.body);
      checkTopK(body.top_k);
      if (body.queries.length > MAX_BATCH_QUERIES) throw new ServiceError('validation_failed', `queries: at most ${MAX_BATCH_QUERIES}`);
      assertBalance(db, datasetId, costOf({ kind: 'query_batch', queries: body.queries.length }));
      const vectors: HybridQuery['vectors'][] = [];
      for (const query of body.queries) vectors.push(await prepareVectors(db, datasetId, ctx.embedder, query).catch(providerFailure));
      return commitPaid(db, { datasetId, now: isoAt(ctx.clock()), onCharged: idem?.onCharged }, () => {
        const results = body.queries.map((query, i) => ({
          query,
          results: searchHybrid(db, { datasetId, query, topK: body.top_k, scoreThreshold: body.score_threshold, vectors: vectors[i] }).map(
            hitJson,
          ),
        }));
        return { op: { kind: 'query_batch', queries: body.queries.length }, ref: null, status: 200, respond: () => ({ results }) };
      });
    }),
  );

  app.post(
    `${V1}/datasets/reindex`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId, plan } = req.auth;
      requireAdvancedTier(plan, 'reindex');
      assertBalance(db, datasetId, costOf({ kind: 'reindex' }));
      await rebuildDatasetVectors(db, datasetId, ctx.embedder).catch(providerFailure);
      return commitPaid(db, { datasetId, now: isoAt(ctx.clock()), onCharged: idem?.onCharged }, () => {
        const { chunks } = reindexDataset(db, datasetId);
        return { op: { kind: 'reindex' }, ref: null, status: 200, respond: () => ({ status: 'done', chunks }) };
      });
    }),
  );
}
