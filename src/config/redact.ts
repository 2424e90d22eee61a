import type { ConfigPath } from './errors.js';
import { isRecord } from './is-record.js';
import type { ResolvedConfig } from './schema.js';
import type { Interpolation } from './yaml-source.js';

export const REDACTED = '[redacted]';

/** Config keys whose values are secrets whatever their source. */
const SECRET_KEY = /(key|token|secret|password)$/i;
/** Environment variable names that hold secrets (`KBSYNC_API_KEY`, `GH_TOKEN`, `DB_PASSWORD`...). */
const SECRET_VARIABLE = /(^|_)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH)(_|$)/i;

/**
 * A copy of the config safe to print: `apiKey` (and any key named like a secret) becomes
 * "[redacted]", as does every value interpolated from a secret-looking variable
 * (`${GH_TOKEN}`), and the password part of any URL.
 */
export function redactConfig(config: ResolvedConfig, interpolations: readonly Interpolation[] = []): Record<string, unknown> {
  const secretPaths = new Set(interpolations.filter((i) => i.variables.some((v) => SECRET_VARIABLE.test(v))).map((i) => pathKey(i.path)));
  return redactValue(config, [], secretPaths) as Record<string, unknown>;
}

function redactValue(value: unknown, path: ConfigPath, secretPaths: ReadonlySet<string>): unknown {
  const last = path[path.length - 1];
  if (value !== undefined && value !== null && typeof last === 'string' && SECRET_KEY.test(last)) return REDACTED;
  if (secretPaths.has(pathKey(path)) && value !== undefined) return REDACTED;
  if (Array.isArray(value)) return value.map((item, i) => redactValue(item, [...path, i], secretPaths));
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, [...path, k], secretPaths)]));
  }
  if (typeof value === 'string') return redactUrlPassword(value);
  return value;
}

/**
 * Credentials inside URLs: `https://user:pass@host` → `https://user:[redacted]@host`, and
 * `https://TOKEN@host` (a token as the user name, as GitHub allows) → `https://[redacted]@host`.
 */
function redactUrlPassword(text: string): string {
  return text
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:\s]*):[^/@\s]+@/i, `$1:${REDACTED}@`)
    .replace(/^(https?:\/\/)[^/@:\s]+@/i, `$1${REDACTED}@`);
}

function pathKey(path: ConfigPath): string {
  return JSON.stringify(path);
}
