import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderConfigJsonSchema } from './json-schema.js';
import { CONFIG_SCHEMA_FILE, schemaModeline } from './schema-file.js';
import { STARTER_CONFIG } from './starter.js';

const EXAMPLE = new URL('../../examples/kbsync.yaml', import.meta.url);

/** The committed schema, compiled the way an editor's validator reads it. */
function validator(): (doc: unknown) => string[] {
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  const validate = ajv.compile(JSON.parse(readFileSync(CONFIG_SCHEMA_FILE, 'utf8')) as object);
  return (doc) => (validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}

describe('kbsync.schema.json', () => {
  it('is exactly what renderConfigJsonSchema() builds from the zod config', () => {
    const rendered = renderConfigJsonSchema();
    if (process.env.KBSYNC_UPDATE_DOCS === '1') writeFileSync(CONFIG_SCHEMA_FILE, rendered);

    expect(readFileSync(CONFIG_SCHEMA_FILE, 'utf8')).toEqual(rendered);
  });

  it('accepts the starter config and the bundled example', () => {
    const check = validator();

    expect(check(parse(STARTER_CONFIG))).toEqual([]);
    expect(check(parse(readFileSync(EXAMPLE, 'utf8')))).toEqual([]);
  });

  it('refuses an unknown key and a value of the wrong type, and takes ${VAR} for any scalar', () => {
    const check = validator();
    const base = { sources: [{ name: 'docs', path: './docs' }] };

    expect(check({ ...base, budget: { maxCreditsPerRon: 5 } }).join()).toContain('must NOT have additional properties');
    expect(check({ ...base, budget: { maxCreditsPerRun: 'lots' } })).not.toEqual([]);
    expect(check({ ...base, target: { kind: 'cloud' } })).not.toEqual([]);
    expect(check({ ...base, budget: { maxCreditsPerRun: '${CAP:-500}' }, upload: { concurrency: '${N}' } })).toEqual([]);
  });

  it('keeps descriptions and defaults where an editor shows them', () => {
    const schema = JSON.parse(readFileSync(CONFIG_SCHEMA_FILE, 'utf8')) as {
      properties: { budget: { properties: { maxCreditsPerRun: { description?: string; default?: unknown } } } };
    };

    const field = schema.properties.budget.properties.maxCreditsPerRun;
    expect(field.default).toBe(500);
    expect(field.description).toMatch(/credit/i);
  });
});

describe('schemaModeline', () => {
  it('names the schema relative to a config folder that holds it, and by file URL otherwise', () => {
    const packageRoot = join(CONFIG_SCHEMA_FILE, '..');

    expect(schemaModeline(packageRoot)).toBe('# yaml-language-server: $schema=./kbsync.schema.json\n');
    expect(schemaModeline(join(packageRoot, '..'))).toMatch(/^# yaml-language-server: \$schema=\.\/[^.][^\n]*kbsync\.schema\.json\n$/);
    expect(schemaModeline('/elsewhere')).toBe(`# yaml-language-server: $schema=file://${CONFIG_SCHEMA_FILE}\n`);
  });
});
