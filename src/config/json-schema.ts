import { toJSONSchema } from 'zod';
import { Config } from './schema.js';

type Node = Record<string, unknown>;

/** Formats JSON Schema defines; zod's own (`starts_with`...) would only make editors warn. */
const STANDARD_FORMATS = new Set(['uri', 'email', 'date-time', 'date', 'time', 'uuid', 'ipv4', 'ipv6', 'hostname']);
/** A value that kbsync expands from the environment (`${VAR}`, `${VAR:-default}`) before it checks it. */
const INTERPOLATED = { type: 'string', pattern: '\\$\\{[^}]+\\}' };

/**
 * The JSON Schema of kbsync.yaml (draft 7, what yaml-language-server and VS Code read), derived from
 * the zod config: every key with its description, type and default, unknown keys refused. A scalar
 * may also be written as `${VAR}`, which is checked after expansion, not here.
 */
export function renderConfigJsonSchema(): string {
  const schema = toJSONSchema(Config, { io: 'input', unrepresentable: 'any', target: 'draft-7' }) as Node;
  const out = { ...schema, title: 'kbsync.yaml', description: 'kbsync configuration (docs/config.md)' };
  return `${JSON.stringify(tidy(out, true), null, 2)}\n`;
}

function tidy(node: Node, root = false): Node {
  const out: Node = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'format' && !STANDARD_FORMATS.has(String(value))) continue;
    if (key === 'properties' && isNode(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isNode(v) ? tidy(v) : v]));
    else if ((key === 'items' || key === 'additionalProperties') && isNode(value)) out[key] = tidy(value);
    else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value))
      out[key] = value.map((v: unknown) => (isNode(v) ? tidy(v) : v));
    else out[key] = value;
  }
  return root ? out : interpolable(out);
}

/** A scalar leaf becomes `anyOf: [itself, ${VAR}]`, its description and default kept on top. */
function interpolable(node: Node): Node {
  const scalar = node.type !== undefined && node.type !== 'object' && node.type !== 'array';
  const union = Array.isArray(node.anyOf) && node.anyOf.every((v: unknown) => isNode(v) && v.type !== 'object' && v.type !== 'array');
  if (!scalar && !union) return node;
  const { description, default: dflt, ...rest } = node;
  const alternatives = union ? [...(node.anyOf as Node[])] : [rest];
  return {
    ...(description === undefined ? {} : { description }),
    ...(dflt === undefined ? {} : { default: dflt }),
    anyOf: [...alternatives, INTERPOLATED],
  };
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
