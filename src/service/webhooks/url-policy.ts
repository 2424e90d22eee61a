/** Longest webhook URL accepted (a sanity bound, not a spec value). */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why a URL is refused, or null when it may receive deliveries under this policy. */
export function webhookUrlProblem(raw: unknown, allowInsecure: boolean): string | null {
  if (typeof raw !== 'string' || raw.length === 0) return 'url must be a non-empty string';
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url is not a valid absolute URL';
  }
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) {
    return allowInsecure ? null : 'http:// URLs need the service started with --allow-insecure-webhooks; use https://';
  }
  return allowInsecure
    ? 'url must use https:// (plain http:// is allowed only for 127.0.0.1, localhost or [::1])'
    : 'url must use https://';
}
