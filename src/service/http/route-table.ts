import { ServiceError } from '../service-error.js';

/** The methods a route may serve; a request with another one (OPTIONS, TRACE...) on a known path stays a 404. */
const METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** One served route: a method and its path pattern as registered (`/api/v1/ext/agents/:agent`). */
export type ServedRoute = { method: string; url: string };

/** A route found for a request: what was registered for it, and its path parameters (percent-decoded). */
export type Found<T> = { value: T; params: Record<string, string> };

type Pattern<T> = { test: RegExp; names: string[]; methods: Map<string, T> };

/** `/a/:id/b/` as a RegExp over a path without its trailing slash: a parameter is one non-empty segment. */
function patternOf(url: string): { test: RegExp; names: string[] } {
  const segments = url.split('/');
  const parts = segments.map((s) => (s.startsWith(':') ? '([^/]+)' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return { test: new RegExp(`^${parts.join('/')}$`), names: segments.filter((s) => s.startsWith(':')).map((s) => s.slice(1)) };
}

/** A request URL's path, without its query and trailing slashes (`/a/` is `/a`). */
function pathOf(url: string): string {
  return (url.split('?')[0] ?? '').replace(/\/+$/, '');
}

export type RouteTable<T> = {
  /** Records a route: its methods and what they run. */
  add(url: string, methods: readonly string[], value: T): void;
  /** Every route recorded, in registration order (HEAD routes included). */
  routes(): ServedRoute[];
  /**
   * The route serving `method` on the URL's path (trailing slash and query ignored), or null; a
   * parameter that is not valid percent-encoding is a 400.
   */
  find(method: string, url: string): Found<T> | null;
  /** The 405 for a request `find` found no route for, when its path is served with other methods; else null. */
  methodNotAllowed(method: string, url: string): ServiceError | null;
};

/**
 * The service's router: each path pattern is a RegExp, and a path's most specific matching pattern
 * (a static segment wins over a parameter) names its methods. The service has about twenty patterns, so a
 * scan of them costs little per request, where a router package cost time at every start (its module and
 * its tree: docs/architecture.md, "The service's start"). A known path asked with another method is
 * a 405 `method_not_allowed` with `Allow`.
 */
export function createRouteTable<T>(): RouteTable<T> {
  const served: ServedRoute[] = [];
  const patterns = new Map<string, Pattern<T>>();

  const match = (path: string): { pattern: Pattern<T>; groups: string[] } | null => {
    let best: { pattern: Pattern<T>; groups: string[] } | null = null;
    for (const pattern of patterns.values()) {
      if (best !== null && pattern.names.length >= best.pattern.names.length) continue;
      const m = pattern.test.exec(path);
      if (m !== null) best = { pattern, groups: m.slice(1) };
    }
    return best;
  };

  return {
    add(url, methods, value) {
      for (const method of methods) served.push({ method, url });
      const key = url.replace(/\/+$/, '');
      const pattern = patterns.get(key) ?? { ...patternOf(key), methods: new Map<string, T>() };
      for (const m of methods) pattern.methods.set(m, value);
      patterns.set(key, pattern);
    },
    routes: () => [...served],
    find(method, url) {
      const found = match(pathOf(url));
      const value = found?.pattern.methods.get(method);
      if (found === null || value === undefined) return null;
      const params: Record<string, string> = {};
      found.pattern.names.forEach((name, i) => {
        try {
          params[name] = decodeURIComponent(found.groups[i] ?? '');
        } catch {
          throw new ServiceError('invalid_request', `malformed URL (bad percent-encoding): ${pathOf(url).slice(0, 200)}`);
        }
      });
      return { value, params };
    },
    methodNotAllowed(method, url) {
      if (!METHODS.includes(method)) return null;
      const found = match(pathOf(url));
      if (found === null || found.pattern.methods.has(method)) return null;
      const allow = [...found.pattern.methods.keys()].filter((m) => m !== 'HEAD').join(', ');
      return new ServiceError('method_not_allowed', `${method} is not allowed here (allowed: ${allow})`, { headers: { allow } });
    },
  };
}
