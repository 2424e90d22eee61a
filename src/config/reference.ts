import type { z } from 'zod';
import { Config } from './schema.js';
import { defOf, shapeOf, unwrap } from './schema-walk.js';

type AnySchema = z.core.$ZodType;
type Row = { key: string; type: string; default: string; meaning: string };
type Section = { title: string; rows: Row[] };

const HEADER = `# kbsync.yaml reference

<!-- Generated from src/config/schema.ts by src/config/reference.ts: do not edit by hand.
     Regenerate with: KBSYNC_UPDATE_DOCS=1 npx vitest run src/config/reference.test.ts -->

kbsync reads the file given with \`-c/--config\`, else the nearest \`kbsync.yaml\` in the working folder or a
folder above it (up to \`$HOME\` when inside it; README "Config").
\`kbsync init\` writes a commented starter file; \`kbsync config check\` validates one and prints it
resolved, with secrets redacted.

- **Unknown keys are errors** (with a "did you mean" hint), so a typo never passes silently.
- **Every problem is reported at once**, each as \`FILE:LINE: PATH: MESSAGE\`
  (for example \`kbsync.yaml:14: sources[1].path: no such directory\`), and kbsync exits with 2.
- **Environment variables**: any string value may use \`\${VAR}\` or \`\${VAR:-default}\` (the default
  applies when VAR is unset or empty). An unset \`\${VAR}\` without a default is an error naming the
  variable. Write \`$\${\` for a literal \`\${\`. An unquoted value is typed after expansion
  (\`maxCreditsPerRun: \${CAP:-500}\` is a number); a quoted one stays a string. Inside \`{ ... }\` or
  \`[ ... ]\` quote the value (\`apiKey: "\${KBSYNC_API_KEY}"\`).
- **Paths** (\`state\`, \`target.dataDir\`, \`target.apiKeyFile\`, \`sources[].path\`, and a
  \`sources[].git.url\` starting with \`./\` or \`../\`) are relative to the config file's folder;
  \`~/\` is your home folder.
- **Secrets**: \`target.apiKeyFile\` must be mode 0600 or stricter (\`chmod 600 FILE\`); its trimmed
  content becomes the API key. Printed configs show \`[redacted]\` for the key, for values taken from
  secret-looking variables (\`*_KEY\`, \`*_TOKEN\`, \`*_SECRET\`, \`*_PASSWORD\`...) and for passwords in URLs.
- An empty section (\`budget:\` with every line under it commented out) means "all defaults".
- **A running \`kbsync watch\` reloads the file** on SIGHUP (\`systemctl reload\`) and when it changes
  (an editor's atomic save included), between two syncs: it logs \`config reloaded\` with each changed
  key (a secret's value never) and syncs everything under the new config. An invalid file is logged
  with each problem's \`FILE:LINE\` and the daemon runs on with the config it has. A change to
  \`state\`, \`target.*\` (but a remote target's \`apiKey\`/\`apiKeyFile\`), \`watch.watcher\` or
  \`watch.webhookSecret\`, \`watch.httpToken\` (and, on a PostgreSQL state, a source added or removed) needs a restart: the
  whole edit is refused, with a log line saying so.
`;

/** The markdown of docs/config.md, built from the zod schema's descriptions, types and defaults. */
export function renderConfigReference(): string {
  const sections: Section[] = [];
  collect(Config, '', 'Top level', sections);
  const body = sections.map((s) =>
    [`## ${s.title}`, '', '| key | type | default | meaning |', '|---|---|---|---|', ...s.rows.map(renderRow), ''].join('\n'),
  );
  return `${HEADER}\n${body.join('\n')}`;
}

function collect(schema: AnySchema, prefix: string, title: string, sections: Section[]): void {
  const section: Section = { title, rows: [] };
  sections.push(section);
  const nested: [AnySchema, string][] = [];
  for (const [key, field] of Object.entries(shapeOf(schema) ?? {})) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    section.rows.push({ key: path, type: typeOf(field), default: defaultOf(field), meaning: descriptionOf(field) });
    const inner = unwrap(field);
    const def = defOf(inner);
    if (def.type === 'object') nested.push([inner, path]);
    if (def.type === 'array' && defOf(unwrap(def.element as AnySchema)).type === 'object')
      nested.push([def.element as AnySchema, `${path}[]`]);
  }
  for (const [inner, path] of nested) collect(inner, path, `\`${path}\``, sections);
}

function renderRow(row: Row): string {
  return `| ${[`\`${row.key}\``, row.type, row.default, row.meaning].map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
}

function descriptionOf(field: AnySchema): string {
  return (field as { description?: string }).description ?? '';
}

/** "required", "—" (optional, no default) or the default value in backticks. */
function defaultOf(field: AnySchema): string {
  const def = defOf(field);
  if (def.type === 'default' || def.type === 'prefault') {
    const value = def.defaultValue;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return 'see below';
    return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
  }
  if (def.type === 'optional') return '—';
  return 'required';
}

/** A human name for the accepted values: `integer ≥ 1, ≤ 64`, `` `free` \| `basic` ``, `list of string`. */
function typeOf(field: AnySchema): string {
  const def = defOf(field);
  switch (def.type) {
    case 'default':
    case 'prefault':
    case 'optional':
      return typeOf(def.innerType as AnySchema);
    case 'nullable':
      return `${typeOf(def.innerType as AnySchema)} or null`;
    case 'pipe':
      return typeOf(def.in as AnySchema);
    case 'union':
      return (def.options as AnySchema[]).map(typeOf).join(' or ');
    case 'enum':
      return Object.values(def.entries as Record<string, string>)
        .map((v) => `\`${v}\``)
        .join(', ');
    case 'array':
      return `list of ${typeOf(def.element as AnySchema)}`;
    case 'object':
      return 'mapping';
    case 'number':
      return numberType(field);
    case 'string':
      return stringType(field);
    default:
      return def.type;
  }
}

function numberType(field: AnySchema): string {
  const checks = ((defOf(field).checks ?? []) as AnySchema[]).map((c) => c._zod.def as unknown as NumberCheck);
  const isInt = checks.some((c) => c.check === 'number_format' && (c.format === 'safeint' || c.format === 'int32'));
  const bounds = checks.flatMap((c) => {
    if (c.check === 'greater_than' && c.value !== undefined) {
      if (c.inclusive) return [`≥ ${c.value}`];
      return [isInt ? `≥ ${c.value + 1}` : `> ${c.value}`];
    }
    if (c.check === 'less_than' && c.value !== undefined) return [c.inclusive ? `≤ ${c.value}` : `< ${c.value}`];
    return [];
  });
  return [isInt ? 'integer' : 'number', bounds.join(', ')].filter((part) => part !== '').join(' ');
}

type NumberCheck = { check: string; format?: string; value?: number; inclusive?: boolean };

function stringType(field: AnySchema): string {
  if (defOf(field).format === 'url') return 'URL (http or https)';
  const checks = ((defOf(field).checks ?? []) as AnySchema[]).map((c) => c._zod.def as unknown as StringCheck);
  const rules = checks.flatMap((c) => {
    if (c.format === 'starts_with' && c.prefix !== undefined) return [`starting with \`${c.prefix}\``];
    if (c.format === 'regex' && c.pattern !== undefined) return [`matching \`${c.pattern.source}\``];
    return [];
  });
  return ['string', ...rules].join(' ');
}

type StringCheck = { check: string; format?: string; prefix?: string; pattern?: RegExp };
