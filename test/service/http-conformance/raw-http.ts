import { connect, type Socket } from 'node:net';

/** One HTTP response read off the wire. */
export type RawResponse = {
  /** The status line's version, as sent ("HTTP/1.1"). */
  version: string;
  status: number;
  /** Header names lowercased; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The body as text. */
  text: string;
  /** The body parsed as JSON, or null when it is not JSON. */
  json: { error?: { code: string; message: string } } & Record<string, unknown>;
};

/**
 * A client connection that writes bytes as given and reads responses as they come, one at a time, in
 * order: what an HTTP/1.1 client (and a proxy, a pipelining client, a slow or broken one) does with a socket.
 */
export type RawConnection = {
  socket: Socket;
  write(data: string | Buffer): Promise<void>;
  /** The next response on the connection; `head: true` for the answer to a HEAD (it has no body). */
  response(o?: { head?: boolean }): Promise<RawResponse>;
  /** Resolves once the service has closed its side of the connection, with the bytes it sent that no response() took. */
  closed(): Promise<string>;
  /** Ends the client's side (a half-close: the answer can still be read). */
  end(): void;
  destroy(): void;
};

/** Opens a connection to 127.0.0.1:`port`. */
export function rawConnect(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let buffered = Buffer.alloc(0);
    let ended = false;
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    const notify = (): void => {
      const w = wake;
      wake = null;
      w?.();
    };
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      notify();
    });
    socket.on('end', () => {
      ended = true;
      notify();
    });
    socket.on('close', () => {
      ended = true;
      notify();
    });
    socket.on('error', (err) => {
      failure = err;
      notify();
    });
    /** Waits until `ready()` is true of the bytes buffered, or fails when the connection ends first. */
    const until = async (ready: () => boolean, what: string): Promise<void> => {
      while (!ready()) {
        if (failure !== null) throw failure;
        if (ended)
          throw new Error(`the connection ended before ${what} (received: ${JSON.stringify(buffered.toString('latin1').slice(0, 300))})`);
        await new Promise<void>((r) => (wake = r));
      }
    };
    const take = (n: number): Buffer => {
      const out = buffered.subarray(0, n);
      buffered = buffered.subarray(n);
      return Buffer.from(out);
    };
    const conn: RawConnection = {
      socket,
      write: (data) => new Promise((res, rej) => socket.write(data, (err) => (err ? rej(err) : res()))),
      async response(o = {}) {
        await until(() => buffered.includes('\r\n\r\n'), 'a response head');
        const headEnd = buffered.indexOf('\r\n\r\n');
        const [statusLine = '', ...lines] = take(headEnd + 4)
          .toString('latin1')
          .slice(0, -4)
          .split('\r\n');
        const m = /^(HTTP\/\d\.\d) (\d{3})/.exec(statusLine);
        if (m === null) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
        const status = Number(m[2]);
        const headers: Record<string, string> = {};
        for (const line of lines) {
          const at = line.indexOf(':');
          const name = line.slice(0, at).trim().toLowerCase();
          const value = line.slice(at + 1).trim();
          headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
        }
        let body: Buffer = Buffer.alloc(0);
        const bodiless = o.head === true || status === 204 || status === 304 || (status >= 100 && status < 200);
        if (!bodiless && headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
          const parts: Buffer[] = [];
          for (;;) {
            await until(() => buffered.includes('\r\n'), 'a chunk size');
            const size = parseInt(take(buffered.indexOf('\r\n') + 2).toString('latin1'), 16);
            await until(() => buffered.length >= size + 2, 'a chunk');
            const chunk = take(size + 2).subarray(0, size);
            if (size === 0) break;
            parts.push(chunk);
          }
          body = Buffer.concat(parts);
        } else if (!bodiless && headers['content-length'] !== undefined) {
          const length = Number(headers['content-length']);
          await until(() => buffered.length >= length, `a body of ${length} bytes`);
          body = take(length);
        } else if (!bodiless) {
          await until(() => ended, 'the end of a body read to the close');
          body = take(buffered.length);
        }
        const text = body.toString('utf8');
        let json: RawResponse['json'];
        try {
          json = JSON.parse(text) as RawResponse['json'];
        } catch {
          json = null as unknown as RawResponse['json'];
        }
        return { version: m[1] ?? '', status, headers, body, text, json };
      },
      async closed() {
        // A reset (ECONNRESET) ends the connection as well as a FIN does.
        while (!ended && failure === null) await new Promise<void>((r) => (wake = r));
        return take(buffered.length).toString('latin1');
      },
      end: () => socket.end(),
      destroy: () => socket.destroy(),
    };
    socket.once('connect', () => resolve(conn));
    socket.once('error', reject);
  });
}

/** An HTTP/1.1 request as bytes: its request line, `Host`, the headers given and the body (with its Content-Length unless a header sets the framing). */
export function httpRequest(method: string, target: string, headers: Record<string, string> = {}, body?: string | Buffer): Buffer {
  const all: Record<string, string> = { host: 'kbsync.test', ...headers };
  const framed = Object.keys(all).some((k) => ['content-length', 'transfer-encoding'].includes(k.toLowerCase()));
  if (body !== undefined && !framed) all['content-length'] = String(Buffer.byteLength(body));
  const head = `${method} ${target} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body === undefined ? Buffer.alloc(0) : Buffer.from(body)]);
}

/** The port of a service URL. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}
