/** Path prefixes of the spec (v1: agents, datasets, files; v2: intelligence, agent-datasets, dataset update, webhooks). */
export const V1 = '/api/v1/ext';
export const V2 = '/api/v2/ext';
/**
 * Where the hosted service's live clients reach the v1 routes (`/api/platform` standing for
 * `/api/v1`, docs/api.md "Base URL, paths, auth"). Every v1 route answers here too.
 */
export const V1_ALIAS = '/api/platform/ext';

/**
 * The URL a request is routed by: a v1 alias path becomes its `/api/v1/ext` path (query kept);
 * any other URL is returned as it is. Only the whole prefix segment counts (`/api/platform/extra` is not an alias).
 */
export function routedUrl(url: string): string {
  if (!url.startsWith(V1_ALIAS)) return url;
  const next = url.charAt(V1_ALIAS.length);
  return next === '' || next === '/' || next === '?' ? V1 + url.slice(V1_ALIAS.length) : url;
}
