import type * as z from 'zod';
import type * as zodSubset from './zod.js';
import { ServiceError, notFound } from '../service-error.js';
import type { Plan } from '../../shared/plans.js';

/** Who is calling: the dataset their key is scoped to. */
export type AuthInfo = { datasetId: number; plan: Plan; keyHash: string };

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

/** zod's functions the routes use (./zod.ts). */
export type Zod = typeof zodSubset;

let zod: Promise<Zod> | undefined;

/**
 * zod, loaded by the first request that parses a body, or just after the service listens (server.ts):
 * evaluating zod at start would delay the first answer the service can give.
 */
export function loadZod(): Promise<Zod> {
  return (zod ??= import('./zod.js'));
}

/** `build(zod)`'s value, built at its first use (building zod schemas binds their methods: a few ms, for bodies most starts never parse). */
export function lazySchemas<T>(build: (zod: Zod) => T): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= loadZod().then(build));
}

/** An id in a JSON body: a positive integer, or its decimal string (clients may normalise ids to strings). */
export function bodyId(z: Zod) {
  return z.union([
    z.number().int().positive(),
    z
      .string()
      .regex(/^[1-9][0-9]{0,15}$/, 'expected a positive integer id')
      .transform(Number),
  ]);
}

const page = lazySchemas((z) =>
  z.object({
    limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
    offset: z.coerce.number().int().min(0).default(0),
  }),
);

/** `limit` (default 1,000, at most 10,000) and `offset` from the query string. */
export async function parsePage(query: unknown): Promise<{ limit: number; offset: number }> {
  const q = (query ?? {}) as Record<string, unknown>;
  for (const key of ['limit', 'offset'])
    if (Array.isArray(q[key])) throw new ServiceError('invalid_request', `${key}: give it at most once`);
  return parseBody(await page(), {
    limit: q['limit'] === '' ? undefined : q['limit'],
    offset: q['offset'] === '' ? undefined : q['offset'],
  });
}
