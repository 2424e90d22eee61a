import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The headers every answer of the page and `/api/*` carries: only the page's own script and stylesheet may run. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** The cookie a browser holds once it gave the token (an HMAC of it: the token itself is never sent back). */
export const SESSION_COOKIE = 'kbsync_session';

/** The header a page's POST carries: the CSRF token of the page it was served with. */
export const CSRF_HEADER = 'x-kbsync-csrf';

/** True for a loopback host: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host) || host === '::ffff:127.0.0.1';
}

export type PageAccess = {
  /** Whether the page and /api/* ask for the token (bound off loopback, or a token set). */
  tokenRequired: boolean;
  /** Off loopback and no token: the page is refused whole (401), with what to set. */
  noToken: boolean;
  /** Why a request may not see the page: null when it may. */
  refusal(req: IncomingMessage): { status: number; error: string; hint: string } | null;
  /** Whether a POST that spends or changes may run: the token, or the page's CSRF token from the same origin. */
  postAllowed(req: IncomingMessage): boolean;
  /** The value of the session cookie for this token (null without one). */
  sessionValue: string | null;
  /** True when `given` is the token. */
  tokenMatches(given: string): boolean;
  /** The CSRF token the page is served with (new at each start). */
  csrf: string;
};

/**
 * Whether a request comes from the daemon's own origin: its Origin header (when sent) names the Host it
 * was sent to, and a browser's Sec-Fetch-Site (when sent) says same-origin.
 */
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined && hostOf(origin) !== (req.headers.host ?? '').toLowerCase()) return false;
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin';
}

/**
 * The page's access rules. Bound off loopback (or with a token set), the page and /api/* need the token:
 * `Authorization: Bearer TOKEN`, or the session cookie a POST /login with the token sets. Bound to
 * loopback, the Host header must name loopback (no DNS rebinding). A POST needs the token in the
 * header, or the page's CSRF token from a same-origin request.
 */
export function createPageAccess(o: { host: string; token: string | null; port: () => number }): PageAccess {
  const loopback = isLoopback(o.host);
  const token = o.token;
  const tokenRequired = !loopback || token !== null;
  const sessionValue = token === null ? null : createHmac('sha256', token).update('kbsync page session').digest('base64url');
  const csrf = randomBytes(24).toString('base64url');
  const same = (a: string, b: string): boolean => {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  };
  const tokenMatches = (given: string): boolean => token !== null && same(given, token);
  const bearer = (req: IncomingMessage): boolean => {
    const h = req.headers.authorization;
    return typeof h === 'string' && h.startsWith('Bearer ') && tokenMatches(h.slice(7).trim());
  };
  const session = (req: IncomingMessage): boolean => {
    if (sessionValue === null) return false;
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const [k, v] = part.trim().split('=');
      if (k === SESSION_COOKIE && v !== undefined && same(v, sessionValue)) return true;
    }
    return false;
  };
  const hostAllowed = (req: IncomingMessage): boolean => {
    if (!loopback) return true;
    const port = o.port();
    const given = (req.headers.host ?? '').toLowerCase();
    return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${o.host}:${port}`].includes(given);
  };
  return {
    tokenRequired,
    noToken: tokenRequired && token === null,
    sessionValue,
    tokenMatches,
    csrf,
    refusal(req) {
      if (!hostAllowed(req))
        return {
          status: 403,
          error: 'host_not_allowed',
          hint: 'this daemon answers its page only at 127.0.0.1, localhost or [::1] (Host header check)',
        };
      if (!tokenRequired || bearer(req) || session(req)) return null;
      return {
        status: 401,
        error: 'token_required',
        hint:
          token === null
            ? 'bound off loopback: set watch.httpToken (or KBSYNC_HTTP_TOKEN) and restart, or reach the page through an SSH tunnel to a loopback address'
            : 'send Authorization: Bearer TOKEN (watch.httpToken), or sign in on the page',
      };
    },
    postAllowed(req) {
      if (bearer(req)) return true;
      const given = req.headers[CSRF_HEADER];
      return (
        typeof given === 'string' &&
        same(given, csrf) &&
        sameOrigin(req) &&
        (req.headers['content-type'] ?? '').startsWith('application/json')
      );
    },
  };
}

/** The host (and port) of an Origin header; null when it is none (`null`, a bad URL). */
function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}
