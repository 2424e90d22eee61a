import type { FastifyRequest } from 'fastify';
import * as z from 'zod';
import { ServiceError, notFound } from '../service-error.js';
import type { Plan } from '../../shared/plans.js';

/** Who is calling: the dataset their key is scoped to. */
export type AuthInfo = { datasetId: number; plan: Plan; keyHash: string };

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthInfo | null;
  }
}

/** The caller's auth (set by the auth hook on every API route). */
export function authOf(req: FastifyRequest): AuthInfo {
  if (req.auth === null) throw new ServiceError('unauthorized', 'missing API key');
  return req.auth;
}

/** One line per problem: `path: message`, and `path: unknown field` for each key a strict object refused. */
function issueLines(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `${[...issue.path, key].join('.')}: unknown field`);
  return [`${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`];
}

/**
 * Parses a request body with a zod schema; a failure is a 400 naming the field. Bodies are lenient
 * (unknown fields ignored) unless their schema is a `z.strictObject`: see docs/service.md for which.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const message = result.error.issues.flatMap(issueLines).slice(0, 5).join('; ');
  throw new ServiceError('invalid_request', message);
}

/** A positive integer id from a path parameter; anything else names nothing (404). */
export function parseIdParam(value: unknown, what: string): number {
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,15}$/.test(value)) throw notFound(what);
  return Number(value);
}

/**
 * `build()`'s value, built on its first use. The routes' zod schemas are made this way: building
 * zod schemas (each binds its methods) took a few ms of every service start, for bodies most starts
 * never parse.
 */
export function onFirstUse<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/** An id in a JSON body: a positive integer, or its decimal string (clients may normalise ids to strings). */
export const bodyId = onFirstUse(() =>
  z.union([
    z.number().int().positive(),
    z
      .string()
      .regex(/^[1-9][0-9]{0,15}$/, 'expected a positive integer id')
      .transform(Number),
  ]),
);

const page = onFirstUse(() =>
  z.object({
    limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
    offset: z.coerce.number().int().min(0).default(0),
  }),
);

/** `limit` (default 1,000, at most 10,000) and `offset` from the query string. */
export function parsePage(query: unknown): { limit: number; offset: number } {
  const q = (query ?? {}) as Record<string, unknown>;
  return parseBody(page(), { limit: q['limit'] === '' ? undefined : q['limit'], offset: q['offset'] === '' ? undefined : q['offset'] });
}
