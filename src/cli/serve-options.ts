import { KbsyncError } from '../shared/errors.js';
import { MIB, PLANS, type Plan } from '../shared/plans.js';

/** `kbsync serve`'s option values, checked before anything starts: a bad one is a usage error (exit 2). */

/** Largest `--max-file-mb` value: 1 TiB (bytes stay exact integers far beyond it). */
const MAX_FILE_MB = 1_048_576;

/** `--port`: 0..65535 (0 picks a free port). */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) throw new KbsyncError('usage', `--port: a number from 0 to 65535, got "${value}"`);
  return port;
}

/** `--rate-limit N/min` (or just N): requests per minute per key. */
export function parseRateLimit(value: string): number {
  const match = /^(\d+)(?:\/min)?$/.exec(value.trim());
  const perMinute = Number(match?.[1]);
  if (match === null || perMinute < 1) throw new KbsyncError('usage', `--rate-limit: N/min with N >= 1 (e.g. 120/min), got "${value}"`);
  return perMinute;
}

/** An option's whole number from `min` to `max`. */
export function parseWholeNumber(option: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw new KbsyncError('usage', `${option}: a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** A whole, non-negative number of credits. */
export function parseCredits(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new KbsyncError('usage', `credits: a whole number, got "${value}"`);
  return Number(value);
}

/**
 * `--llm-url`: an http(s) URL with a host. Anything else would start a server whose every chat
 * answers 502. A value that is not a URL at all is not echoed (it may be a key pasted by mistake).
 */
export function parseLlmUrl(value: string): string {
  const expected = '--llm-url: an http:// or https:// URL of an OpenAI-compatible server (e.g. http://127.0.0.1:11434/v1)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new KbsyncError('usage', `${expected}; the value given is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new KbsyncError('usage', `${expected}; got "${url.protocol}"`);
  if (url.hostname === '') throw new KbsyncError('usage', `${expected}; the URL names no host`);
  return value;
}

/**
 * `--max-file-mb plan=N[,plan=N]` (repeatable): per-plan upload limits in MB (1 MB = 1,048,576
 * bytes, as docs/api.md counts), returned in bytes and merged into `previous`.
 */
export function parseMaxFileMb(value: string, previous: Partial<Record<Plan, number>> = {}): Partial<Record<Plan, number>> {
  const usage = (detail: string) => new KbsyncError('usage', `--max-file-mb: plan=N[,plan=N] (e.g. team=1000,enterprise=2000): ${detail}`);
  const limits = { ...previous };
  const seen = new Set<string>();
  for (const item of value.split(',')) {
    const match = /^\s*([a-z]+)\s*=\s*(\S+?)\s*$/.exec(item);
    if (match === null) throw usage(`expected plan=N, got "${item.trim().slice(0, 50)}"`);
    const [, name = '', mb = ''] = match;
    if (!(PLANS as readonly string[]).includes(name)) throw usage(`unknown plan "${name}" (plans: ${PLANS.join(', ')})`);
    const plan = name as Plan;
    if (seen.has(plan) || previous[plan] !== undefined) throw usage(`${plan} given twice`);
    seen.add(plan);
    if (!/^\d+$/.test(mb) || Number(mb) < 1 || Number(mb) > MAX_FILE_MB)
      throw usage(`${plan}: a whole number of MB from 1 to ${MAX_FILE_MB}, got "${mb.slice(0, 20)}"`);
    limits[plan] = Number(mb) * MIB;
  }
  return limits;
}

/**
 * What a failed listen means for the person who ran `kbsync serve`: a busy or privileged port, or
 * an address that is not this host's, is a usage error naming the option to change; anything else is
 * returned unchanged.
 */
export function listenFailure(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE') return new KbsyncError('usage', `port ${port} is in use; pick another with --port`, { cause: err });
  if (code === 'EACCES') {
    return new KbsyncError(
      'usage',
      `no permission to listen on port ${port} (ports below 1024 need privileges); pick another with --port`,
      { cause: err },
    );
  }
  if (code === 'EADDRNOTAVAIL')
    return new KbsyncError('usage', `cannot listen on ${host}: not an address of this machine; pick another with --host`, { cause: err });
  return err;
}

/** The embeddings provider `kbsync serve` uses, from its environment (a key stays out of argv and `ps`). */
export type EmbeddingsEnv = { url: string; model: string; apiKey?: string };

/** The default `KBSYNC_EMBEDDINGS_MODEL`: OpenAI's small embeddings model. */
export const DEFAULT_EMBEDDINGS_MODEL = 'text-embedding-3-small';

/**
 * `KBSYNC_EMBEDDINGS_URL` (an http:// or https:// OpenAI-compatible server: `.../v1` or the full
 * `.../embeddings`), `KBSYNC_EMBEDDINGS_MODEL` and `KBSYNC_EMBEDDINGS_API_KEY`; undefined without a
 * URL (the built-in vectors). A bad URL, or a model or key without a URL, is a usage error.
 */
export function embeddingsFromEnv(env: NodeJS.ProcessEnv): EmbeddingsEnv | undefined {
  const url = env.KBSYNC_EMBEDDINGS_URL?.trim() ?? '';
  const model = env.KBSYNC_EMBEDDINGS_MODEL?.trim() ?? '';
  const apiKey = env.KBSYNC_EMBEDDINGS_API_KEY ?? '';
  if (url === '') {
    if (model !== '' || apiKey !== '') {
      throw new KbsyncError(
        'usage',
        'KBSYNC_EMBEDDINGS_MODEL or KBSYNC_EMBEDDINGS_API_KEY is set without KBSYNC_EMBEDDINGS_URL; set the URL too, or unset them',
      );
    }
    return undefined;
  }
  const expected =
    'KBSYNC_EMBEDDINGS_URL: an http:// or https:// URL of an OpenAI-compatible embeddings server (e.g. http://127.0.0.1:11434/v1)';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new KbsyncError('usage', `${expected}; the value given is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new KbsyncError('usage', `${expected}; got "${parsed.protocol}"`);
  return { url, model: model === '' ? DEFAULT_EMBEDDINGS_MODEL : model, ...(apiKey === '' ? {} : { apiKey }) };
}
