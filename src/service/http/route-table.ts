import type { HTTPMethods } from 'fastify';
import { ServiceError } from '../service-error.js';

/** The methods a route may serve; a request with another one (OPTIONS, TRACE...) on a known path stays a 404. */
const METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] satisfies HTTPMethods[];

/** One served route: a method and its path pattern as registered (`/api/v1/ext/agents/:agent`). */
export type ServedRoute = { method: string; url: string };

type Pattern = { test: RegExp; params: number; methods: Set<string> };

/** `/a/:id/b/` as a RegExp over a path without its trailing slash: a parameter is one non-empty segment. */
function patternOf(url: string): { test: RegExp; params: number } {
  const segments = url.split('/');
  const parts = segments.map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return { test: new RegExp(`^${parts.join('/')}$`), params: segments.filter((s) => s.startsWith(':')).length };
}

export type RouteTable = {
  /** Records a served route (from fastify's onRoute hook, so that no route is missed). */
  add(url: string, methods: readonly string[]): void;
  /** Every route recorded, in registration order (HEAD routes included). */
  routes(): ServedRoute[];
  /** The 405 for a request the router found no route for, when its path is served with other methods; else null. */
  methodNotAllowed(method: string, url: string): ServiceError | null;
};

/**
 * The service's routes, and what answers 405 `method_not_allowed` (with `Allow`): a known path asked
 * with a method it does not serve. That is decided when the router has found nothing (in the
 * not-found handler) rather than by a route per missing method: those ~90 routes cost ~10 ms of
 * every start. As in the router, a static segment wins over a parameter: the path's most specific
 * pattern names the allowed methods.
 */
export function createRouteTable(): RouteTable {
  const served: ServedRoute[] = [];
  const patterns = new Map<string, Pattern>();
  return {
    add(url, methods) {
      for (const method of methods) served.push({ method, url });
      const key = url.replace(/\/+$/, '');
      const pattern = patterns.get(key) ?? { ...patternOf(key), methods: new Set<string>() };
      for (const m of methods) pattern.methods.add(m);
      patterns.set(key, pattern);
    },
    routes: () => [...served],
    methodNotAllowed(method, url) {
      if (!METHODS.includes(method)) return null;
      const path = (url.split('?')[0] ?? '').replace(/\/+$/, '');
      let best: Pattern | undefined;
      for (const p of patterns.values()) {
        if (p.test.test(path) && (best === undefined || p.params < best.params)) best = p;
      }
      if (best === undefined || best.methods.has(method)) return null;
      const allow = [...best.methods].filter((m) => m !== 'HEAD').join(', ');
      return new ServiceError('method_not_allowed', `${method} is not allowed here (allowed: ${allow})`, { headers: { allow } });
    },
  };
}
