import type { request } from 'undici';
import { KbsyncError } from '../../shared/errors.js';
import type { ChunkHit } from '../store/chunks.js';

export type LlmRequest = typeof request;

export const DEFAULT_LLM_TIMEOUT_MS = 60_000;

const RAG_INSTRUCTIONS =
  'Answer the question using only the numbered context passages below. ' +
  'If they do not contain the answer, say plainly that the dataset has nothing about it. ' +
  'Cite the passages you use as [n].';

export type LlmCall = {
  llmUrl: string;
  apiKey?: string;
  model: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  message: string;
  hits: readonly ChunkHit[];
  timeoutMs: number;
  requestImpl: LlmRequest;
};

/** The chat-completions URL for a base URL given as `http://h:p`, `http://h:p/v1` or the full endpoint. */
export function completionsUrl(llmUrl: string): string {
  const base = llmUrl.replace(/\/+$/, '');
  if (base.endsWith('/chat/completions')) return base;
  return base.endsWith('/v1') ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
}

/** The messages sent: system prompt and instructions, then the numbered context and the question. */
export function llmMessages(call: Pick<LlmCall, 'systemPrompt' | 'message' | 'hits'>): { role: 'system' | 'user'; content: string }[] {
  const context =
    call.hits.length === 0
      ? '(no passages matched the question)'
      : call.hits.map((h, i) => `[${i + 1}] (source ${h.knowledgeSourceId}, chunk ${h.chunkIndex})\n${h.text}`).join('\n\n');
  const system = [call.systemPrompt?.trim(), RAG_INSTRUCTIONS].filter((s) => s !== undefined && s !== '').join('\n\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: `Context:\n${context}\n\nQuestion: ${call.message}` },
  ];
}

function failure(message: string, cause?: unknown): KbsyncError {
  return new KbsyncError('llm_failed', message, cause === undefined ? undefined : { cause });
}

/** Asks an OpenAI-compatible chat-completions endpoint; any failure is KbsyncError `llm_failed` (never naming the URL or key). */
export async function askLlm(call: LlmCall): Promise<string> {
  const limit = call.timeoutMs < 1000 ? `${call.timeoutMs} ms` : `${Math.round(call.timeoutMs / 1000)} s`;
  let res: Awaited<ReturnType<LlmRequest>>;
  try {
    res = await call.requestImpl(completionsUrl(call.llmUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(call.apiKey ? { authorization: `Bearer ${call.apiKey}` } : {}) },
      body: JSON.stringify({
        model: call.model,
        messages: llmMessages(call),
        stream: false,
        ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
        ...(call.maxTokens === undefined ? {} : { max_tokens: call.maxTokens }),
      }),
      signal: AbortSignal.timeout(call.timeoutMs),
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    });
  } catch (err) {
    const name = (err as Error | null)?.name;
    const code = (err as { code?: unknown } | null)?.code;
    if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT') {
      throw failure(`the language model did not answer within ${limit}`, err);
    }
    throw failure(`could not reach the language model${typeof code === 'string' ? ` (${code})` : ''}`, err);
  }
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    throw failure(`the language model's answer was cut off or took longer than ${limit}`, err);
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw failure(`the language model answered HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
  }
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch (err) {
    throw failure('the language model answered with something that is not JSON', err);
  }
  if (typeof content !== 'string' || content.trim() === '') throw failure('the language model answered without a message');
  return content.trim();
}
