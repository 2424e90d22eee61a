import { ApiError } from './errors.js';
import type { Http } from './http.js';
import * as S from './schemas.js';
import type { DatasetInfo, PaidOpts, QueryResult } from './types.js';

/** Dataset endpoints: list/get (v1), update (v2), query, batch query and reindex (v1, paid). */

export interface DatasetMethods {
  listDatasets(): Promise<{ datasets: DatasetInfo[]; total: number }>;
  getDataset(): Promise<DatasetInfo>;
  updateDataset(body: { name?: string; description?: string }): Promise<DatasetInfo>;
  query(body: { query: string; topK?: number; scoreThreshold?: number }, o?: PaidOpts): Promise<QueryResult[]>;
  queryBatch(body: { queries: string[]; topK?: number }, o?: PaidOpts): Promise<{ query: string; results: QueryResult[] }[]>;
  reindex(o?: PaidOpts): Promise<{ status: string; chunks: number | null }>;
}

/** The dataset methods of a client bound to `http`; `datasetId` picks the dataset getDataset returns. */
export function datasetMethods(http: Http, datasetId: string | undefined): DatasetMethods {
  const listDatasets = () => http.call({ method: 'GET', api: 'v1', path: '/datasets/', kind: 'idempotent' }, S.DatasetList);
  return {
    listDatasets,
    async getDataset(): Promise<DatasetInfo> {
      const { datasets } = await listDatasets();
      const found = datasetId === undefined ? datasets[0] : datasets.find((d) => d.id === datasetId);
      if (found !== undefined) return found;
      throw new ApiError({ code: 'not_found', message: 'the API key sees no dataset', status: null, method: 'GET', url: '/datasets/' });
    },
    // PUT of a name/description sets absolute values: idempotent, so retried.
    updateDataset: (body) => http.call({ method: 'PUT', api: 'v2', path: '/datasets', kind: 'idempotent', json: body }, S.DatasetUpdated),
    query: (body, o?: PaidOpts) =>
      http.call(
        {
          method: 'POST',
          api: 'v1',
          path: '/datasets/query',
          kind: 'paid',
          idempotencyKey: o?.idempotencyKey,
          json: { query: body.query, top_k: body.topK, score_threshold: body.scoreThreshold },
        },
        S.QueryResults,
      ),
    queryBatch: (body, o?: PaidOpts) =>
      http.call(
        {
          method: 'POST',
          api: 'v1',
          path: '/datasets/query/batch',
          kind: 'paid',
          idempotencyKey: o?.idempotencyKey,
          json: { queries: body.queries, top_k: body.topK },
        },
        S.BatchQueryResults,
      ),
    reindex: (o?: PaidOpts) =>
      http.call(
        { method: 'POST', api: 'v1', path: '/datasets/reindex', kind: 'paid', idempotencyKey: o?.idempotencyKey, json: {} },
        S.Reindex,
      ),
  };
}
