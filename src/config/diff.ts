import { isDeepStrictEqual } from 'node:util';
import { isPostgresUrl } from '../shared/state-url.js';
import { isRecord } from './is-record.js';
import { REDACTED, redactConfig } from './redact.js';
import type { ResolvedConfig } from './schema.js';
import type { Interpolation } from './yaml-source.js';

/** One changed key between two configs: `budget.maxCreditsPerDay`, `sources.docs.exclude`, `sources.notes`. */
export type ConfigChange = {
  key: string;
  /** `added` / `removed` for a whole source; `changed` otherwise. */
  kind: 'changed' | 'added' | 'removed';
  /** The old and new values, for people; absent when either is a secret (never an API key in a log). */
  from?: unknown;
  to?: unknown;
};

/** The changes a running daemon cannot take, each with why. */
export type RestartNeeded = { key: string; why: string };

/** Keys the daemon reads once at start: a change to them needs a restart. */
const AT_START: { test: (key: string) => boolean; why: string }[] = [
  { test: (k) => k === 'state', why: 'the state is opened at start' },
  { test: (k) => k === 'target' || k.startsWith('target.'), why: 'the target (service, dataset) is opened at start' },
  { test: (k) => k === 'watch.watcher', why: 'the watcher library is loaded at start' },
  { test: (k) => k === 'watch.webhookSecret', why: 'the --http server takes its webhook secret at start' },
  { test: (k) => k === 'watch.httpToken', why: 'the --http server takes its page token at start' },
];

/**
 * What differs between the config a daemon runs on and a new one, key by key. Sources are matched by
 * name (their order does not count): a source is added, removed, or has changed keys of its own.
 * Values are shown as redactConfig shows them; a secret's never are.
 */
export function configChanges(
  before: ResolvedConfig,
  after: ResolvedConfig,
  interpolations: { before: readonly Interpolation[]; after: readonly Interpolation[] } = { before: [], after: [] },
): ConfigChange[] {
  const shownBefore = bySourceName(redactConfig(before, interpolations.before));
  const shownAfter = bySourceName(redactConfig(after, interpolations.after));
  const rawBefore = bySourceName(before as unknown as Record<string, unknown>);
  const rawAfter = bySourceName(after as unknown as Record<string, unknown>);
  const out: ConfigChange[] = [];
  const walk = (a: unknown, b: unknown, path: string[]): void => {
    if (isDeepStrictEqual(a, b)) return;
    const key = path.join('.');
    if (path[0] === 'sources' && path.length === 2 && (a === undefined || b === undefined)) {
      out.push({ key, kind: a === undefined ? 'added' : 'removed' });
      return;
    }
    if (isRecord(a) && isRecord(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], [...path, k]);
      return;
    }
    const from = at(shownBefore, path);
    const to = at(shownAfter, path);
    const secret = containsRedacted(from) || containsRedacted(to);
    out.push({ key, kind: 'changed', ...(secret ? {} : { from, to }) });
  };
  for (const k of new Set([...Object.keys(rawBefore), ...Object.keys(rawAfter)]))
    if (k !== 'configPath' && k !== 'baseDir') walk(rawBefore[k], rawAfter[k], [k]);
  return out;
}

/** A remote target's API key: the daemon can open the same target again with a new one. */
const CREDENTIALS = new Set(['target.apiKey', 'target.apiKeyFile']);

/**
 * The changes among `changes` that a running daemon cannot apply (it keeps its config and says so).
 * `credentialsLive`: the daemon can open its remote target again with a new API key.
 */
export function restartNeeded(
  before: ResolvedConfig,
  changes: readonly ConfigChange[],
  o: { credentialsLive?: boolean } = {},
): RestartNeeded[] {
  const out: RestartNeeded[] = [];
  const credentialsLive = o.credentialsLive === true && before.target.kind === 'remote';
  for (const c of changes) {
    if (credentialsLive && CREDENTIALS.has(c.key)) continue;
    const rule = AT_START.find((r) => r.test(c.key));
    if (rule !== undefined) out.push({ key: c.key, why: rule.why });
    // A runner of a shared state works the outbox of its own set of source names, fixed at start.
    else if (c.kind !== 'changed' && isPostgresUrl(before.state))
      out.push({ key: c.key, why: 'on a PostgreSQL state the runner’s sources are fixed at start' });
  }
  return out;
}

/** One change as a short text: `budget.maxCreditsPerDay: 2000 → 500`, `sources.notes added`. */
export function describeChange(c: ConfigChange): string {
  if (c.kind !== 'changed') return `${c.key} ${c.kind}`;
  if (!('from' in c)) return `${c.key} (secret, value not shown)`;
  return `${c.key}: ${show(c.from)} → ${show(c.to)}`;
}

function show(value: unknown): string {
  return value === undefined ? '(unset)' : JSON.stringify(value);
}

/** The config with `sources` as an object keyed by name, so that changes are found by name. */
function bySourceName(config: Record<string, unknown>): Record<string, unknown> {
  const sources = Array.isArray(config.sources) ? (config.sources as unknown[]) : [];
  const named: Record<string, unknown> = {};
  for (const s of sources) if (isRecord(s) && typeof s.name === 'string') named[s.name] = s;
  return { ...config, sources: named };
}

function at(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const k of path) v = isRecord(v) ? v[k] : undefined;
  return v;
}

function containsRedacted(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(REDACTED);
  if (Array.isArray(value)) return value.some(containsRedacted);
  if (isRecord(value)) return Object.values(value).some(containsRedacted);
  return false;
}
