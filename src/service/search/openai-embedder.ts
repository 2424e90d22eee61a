import type { request } from 'undici';
import { KbsyncError } from '../../shared/errors.js';
import type { Embedder } from './embedder.js';
import { normalize } from './hashed-vector.js';

export type EmbeddingsRequest = typeof request;

export const DEFAULT_EMBEDDINGS_TIMEOUT_MS = 60_000;
const BATCH_SIZE = 64;

export type OpenAiEmbedderOptions = {
  /** `http://host:port`, `.../v1` or the full `.../embeddings` endpoint. */
  url: string;
  /** Sent as the request's `model`. */
  model: string;
  /** Sent as `Authorization: Bearer` when set; never logged nor put in an error. */
  apiKey?: string;
  timeoutMs?: number;
  /** undici's `request` (loaded on the first call when not given). */
  requestImpl?: EmbeddingsRequest;
};

/** The embeddings URL for a base URL given as `http://h:p`, `http://h:p/v1` or the full endpoint. */
export function embeddingsUrl(url: string): string {
  const base = url.replace(/\/+$/, '');
  if (base.endsWith('/embeddings')) return base;
  return base.endsWith('/v1') ? `${base}/embeddings` : `${base}/v1/embeddings`;
}

function failure(message: string, cause?: unknown): KbsyncError {
  return new KbsyncError('embeddings_failed', message, cause === undefined ? undefined : { cause });
}

/** The vectors of an OpenAI-style embeddings answer, in input order, checked and L2-normalised. */
export function parseEmbeddings(text: string, count: number): Float32Array[] {
  let data: unknown;
  try {
    data = (JSON.parse(text) as { data?: unknown }).data;
  } catch (err) {
    throw failure('the embeddings provider answered with something that is not JSON', err);
  }
  if (!Array.isArray(data) || data.length !== count) {
    throw failure(`the embeddings provider answered ${Array.isArray(data) ? data.length : 'no'} vectors for ${count} texts`);
  }
  const out: Float32Array[] = new Array<Float32Array>(count);
  data.forEach((item: { embedding?: unknown; index?: unknown }, i) => {
    const at = typeof item?.index === 'number' ? item.index : i;
    const e = item?.embedding;
    if (!Array.isArray(e) || e.length === 0 || !e.every((v) => typeof v === 'number' && Number.isFinite(v)) || at < 0 || at >= count) {
      throw failure(`the embeddings provider's vector ${i} is not a list of numbers`);
    }
    out[at] = normalize(Float32Array.from(e as number[]));
  });
  const dims = out[0]?.length;
  if (out.some((v) => v === undefined || v.length !== dims)) throw failure('the embeddings provider answered vectors of different lengths');
  return out;
}

/**
 * An embedder backed by an OpenAI-compatible `POST /embeddings` (`{ model, input: [...] }` →
 * `{ data: [{ embedding, index }] }`), 64 texts per request. Its vectors are stored under the model
 * name `openai:<model>@<endpoint>`, so a change of provider or model is a change of model: the
 * chunks lack vectors of the new one until a reindex (or a query) embeds them.
 */
export function openAiEmbedder(o: OpenAiEmbedderOptions): Embedder {
  const endpoint = embeddingsUrl(o.url);
  const timeoutMs = o.timeoutMs ?? DEFAULT_EMBEDDINGS_TIMEOUT_MS;
  return {
    model: `openai:${o.model}@${endpoint}`,
    batchSize: BATCH_SIZE,
    async embed(texts) {
      if (texts.length === 0) return [];
      const requestImpl = o.requestImpl ?? (await import('undici')).request;
      let res: Awaited<ReturnType<EmbeddingsRequest>>;
      let text: string;
      try {
        res = await requestImpl(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
          body: JSON.stringify({ model: o.model, input: texts }),
          signal: AbortSignal.timeout(timeoutMs),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        text = await res.body.text();
      } catch (err) {
        const code = (err as { code?: unknown } | null)?.code;
        throw failure(`could not reach the embeddings provider${typeof code === 'string' ? ` (${code})` : ''}`, err);
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        throw failure(`the embeddings provider answered HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      }
      return parseEmbeddings(text, texts.length);
    },
  };
}
