import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceivedDelivery = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

/** What to do with one request: answer with a status (and optional headers), or hold it until released. */
export type Reply = number | { status: number; headers?: Record<string, string> } | 'hold';

export type WebhookReceiver = {
  /** `http://127.0.0.1:PORT/hook` */
  url: string;
  received: ReceivedDelivery[];
  /** Replies for the next requests, in order; after them every request gets 200. */
  reply(...replies: Reply[]): void;
  /** Resolves once `count` requests have been received in all. */
  waitFor(count: number): Promise<void>;
  /** Answers every held request with `status`. */
  release(status?: number): void;
  close(): Promise<void>;
};

/** A real HTTP webhook receiver on 127.0.0.1 and a free port, recording every request. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const replies: Reply[] = [];
  const held: ServerResponse[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const w of waiters.filter((x) => received.length >= x.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const reply = replies.shift() ?? 200;
      if (reply === 'hold') {
        held.push(res);
        return;
      }
      const { status, headers } = typeof reply === 'number' ? { status: reply, headers: {} } : reply;
      res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    reply: (...r) => {
      replies.push(...r);
    },
    waitFor: (count) => (received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }))),
    release(status = 200) {
      for (const res of held.splice(0)) res.writeHead(status).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held.splice(0)) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A 127.0.0.1 URL on which nothing listens (a port bound, then released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hook`;
}
