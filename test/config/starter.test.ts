import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Config } from '../../src/config/schema.js';
import { defOf, shapeOf, unwrap } from '../../src/config/schema-walk.js';
import { STARTER_CONFIG } from '../../src/config/starter.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every key name of the schema, at any depth. */
function keyNames(schema: Parameters<typeof shapeOf>[0] = Config): string[] {
  return Object.entries(shapeOf(schema) ?? {}).flatMap(([key, field]) => {
    const inner = unwrap(field);
    const def = defOf(inner);
    const nested = def.type === 'object' ? keyNames(inner) : def.type === 'array' ? keyNames(def.element as typeof inner) : [];
    return [key, ...nested];
  });
}

describe('the starter config', () => {
  it('loads cleanly once its docs folder exists, as defaults plus one docs source', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-starter-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'kbsync.yaml'), STARTER_CONFIG);
    const empty = join(dir, 'empty.yaml');
    writeFileSync(empty, 'convert: [pdf, pptx, doc, odt, ods, odp, rtf, epub]\nsources:\n  - { name: docs, path: ./docs }\n');

    const config = loadConfig(join(dir, 'kbsync.yaml'), {});

    expect({ ...config, configPath: '' }).toEqual({ ...loadConfig(empty, {}), configPath: '' });
    expect(config.target.kind).toBe('embedded');
    const all = ['pdf', 'pptx', 'doc', 'odt', 'ods', 'odp', 'rtf', 'epub'];
    expect(config.convert).toEqual(all);
    expect(config.sources).toEqual([
      { name: 'docs', path: join(dir, 'docs'), include: ['**/*'], exclude: [], followSymlinks: false, convert: all },
    ]);
  });

  it('mentions every key of the schema (remote-only ones commented out) with a comment', () => {
    const lines = STARTER_CONFIG.split('\n');

    for (const key of keyNames()) {
      const at = lines.findIndex((line) => new RegExp(`^\\s*(#\\s*)?(- )?${key}:`).test(line));
      expect(at, key).toBeGreaterThan(0);
    }
    expect(keyNames()).toContain('maxReprocessAttempts');
  });
});
