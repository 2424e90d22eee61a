import type { Database } from 'better-sqlite3';
import type { ChunkHit } from '../store/chunks.js';
import { hashedEmbedder, type Embedder } from '../search/embedder.js';
import { retrieve } from '../search/retrieve.js';
import { composeExtractiveAnswer } from './extractive.js';
import { askLlm, DEFAULT_LLM_TIMEOUT_MS, type LlmRequest } from './llm.js';

export const DEFAULT_CHAT_TOP_K = 5;
const MAX_CHAT_TOP_K = 20;

/** An agent's stored configuration; only these keys are read, each only when it has the right type. */
export type AgentChatConfig = {
  system_prompt?: unknown;
  top_k?: unknown;
  temperature?: unknown;
  score_threshold?: unknown;
  model?: unknown;
  max_tokens?: unknown;
  [key: string]: unknown;
};

export type ChatAnswer = { response: string; sources: ChunkHit[] };

export type AnswerChatOptions = {
  db: Database;
  datasetId: number;
  message: string;
  agentConfig: AgentChatConfig;
  /** An OpenAI-compatible server (`http://host:port`, `.../v1` or `.../v1/chat/completions`); without it the answer is extractive. */
  llmUrl?: string;
  /** Sent as `Authorization: Bearer` to the LLM server when set. */
  llmApiKey?: string;
  /** @default 60000 */
  llmTimeoutMs?: number;
  /** undici's `request` (replaceable in tests). */
  fetchImpl?: LlmRequest;
  /** The vectors of hybrid retrieval, as for queries. @default the built-in hashed vectors */
  embedder?: Embedder;
  /** A knowledge source's name (a file's name), cited in the extractive answer when known. */
  sourceName?: (knowledgeSourceId: number) => string | undefined;
};

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/**
 * A retrieval-augmented answer: the dataset's top chunks for the message (agent `top_k`, default 5)
 * by the same hybrid ranking as queries (search/retrieve.ts),
 * then either an extractive answer composed from their best-matching sentences, or, with `llmUrl`,
 * the model's answer to the system prompt + those chunks + the question. LLM failures throw
 * KbsyncError `llm_failed`.
 */
export async function answerChat(o: AnswerChatOptions): Promise<ChatAnswer> {
  const cfg = o.agentConfig;
  const topK = Math.min(MAX_CHAT_TOP_K, Math.max(1, Math.floor(num(cfg.top_k) ?? DEFAULT_CHAT_TOP_K)));
  const threshold = num(cfg.score_threshold);
  const sources = await retrieve(o.db, o.embedder ?? hashedEmbedder, {
    datasetId: o.datasetId,
    query: o.message,
    topK,
    ...(threshold === undefined ? {} : { scoreThreshold: threshold }),
  });
  if (o.llmUrl === undefined || o.llmUrl === '') return { response: composeExtractiveAnswer(o.message, sources, o.sourceName), sources };
  const systemPrompt = str(cfg.system_prompt);
  const temperature = num(cfg.temperature);
  const maxTokens = num(cfg.max_tokens);
  const response = await askLlm({
    llmUrl: o.llmUrl,
    ...(o.llmApiKey === undefined ? {} : { apiKey: o.llmApiKey }),
    model: str(cfg.model) ?? 'default',
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(maxTokens === undefined ? {} : { maxTokens: Math.floor(maxTokens) }),
    message: o.message,
    hits: sources,
    timeoutMs: o.llmTimeoutMs ?? DEFAULT_LLM_TIMEOUT_MS,
    // undici loads on the first LLM call, not at the service's start, which it would slow (`bench/service-start.ts`).
    requestImpl: o.fetchImpl ?? (await import('undici')).request,
  });
  return { response, sources };
}
