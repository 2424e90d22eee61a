import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { AuthInfo } from './request.js';

/** The body type a route reads: JSON (parsed before its handler runs) or a multipart upload (streamed by it). */
export type BodyType = 'application/json' | 'multipart/form-data';

/** One API request as a route handler sees it: authenticated, its JSON body (if any) parsed. */
export type ApiRequest = {
  readonly raw: IncomingMessage;
  readonly method: string;
  /** The URL it was routed by (a `/api/platform/ext` alias as its `/api/v1/ext` path), query included. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly params: Readonly<Record<string, string | undefined>>;
  /** The query string's parameters; one given twice is an array. */
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  readonly auth: AuthInfo;
};

/** A handler's answer with a status other than 200, or headers of its own. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

export function reply(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return new Reply(status, body, headers);
}

/** A route's handler: a `Reply`, or any other value as a 200 JSON body. */
export type Handler = (req: ApiRequest) => Promise<unknown>;

/** What the route files register their routes on. */
export type Routes = {
  get(path: string, handler: Handler): void;
  post(path: string, handler: Handler, options?: { accepts?: BodyType }): void;
  put(path: string, handler: Handler): void;
  patch(path: string, handler: Handler): void;
};
