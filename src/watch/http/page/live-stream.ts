import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long the open pages wait after a change before the regions are rendered again (changes come in bursts). */
const PUSH_DELAY_MS = 200;
/** A comment line this often keeps proxies from closing an idle stream (only while a page is open). */
const KEEPALIVE_MS = 20_000;

/**
 * The server-sent events of GET /api/events: `hello` (the daemon's pid and start, the CSRF token) at
 * each connection, `regions` (the page's regions rendered again, those that changed since the last
 * push), `stopping` when the daemon ends. With no page open nothing is rendered and no timer runs.
 */
export function createLiveStream(o: { hello: () => unknown; regions: () => Record<string, string> }): {
  open(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>): void;
  changed(): void;
  close(): void;
} {
  const clients = new Set<ServerResponse>();
  let last: Record<string, string> = {};
  let pending: NodeJS.Timeout | null = null;
  let keepalive: NodeJS.Timeout | null = null;
  const event = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

  const push = (): void => {
    pending = null;
    if (clients.size === 0) return;
    const now = o.regions();
    const changed = Object.fromEntries(Object.entries(now).filter(([k, v]) => last[k] !== v));
    last = now;
    if (Object.keys(changed).length === 0) return;
    const text = event('regions', changed);
    for (const c of clients) c.write(text);
  };
  const changed = (): void => {
    if (clients.size === 0 || pending !== null) return;
    pending = setTimeout(push, PUSH_DELAY_MS);
    pending.unref();
  };
  const drop = (res: ServerResponse): void => {
    clients.delete(res);
    if (clients.size === 0 && keepalive !== null) {
      clearInterval(keepalive);
      keepalive = null;
    }
  };
  return {
    open(req, res, headers) {
      res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
      const regions = o.regions();
      if (clients.size === 0) last = regions;
      res.write(`retry: 2000\n\n${event('hello', o.hello())}${event('regions', regions)}`);
      clients.add(res);
      keepalive ??= setInterval(() => {
        for (const c of clients) c.write(': keepalive\n\n');
      }, KEEPALIVE_MS);
      keepalive.unref();
      req.once('close', () => drop(res));
    },
    changed,
    close() {
      if (pending !== null) clearTimeout(pending);
      pending = null;
      for (const c of [...clients]) {
        c.end(event('stopping', {}));
        drop(c);
      }
    },
  };
}
