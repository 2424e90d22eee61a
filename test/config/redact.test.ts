import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfigDetailed } from '../../src/config/load.js';
import { REDACTED, redactConfig } from '../../src/config/redact.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function load(yaml: string, env: Record<string, string>, files: Record<string, string> = {}): ReturnType<typeof loadConfigDetailed> {
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-redact-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content, { mode: 0o600 });
  writeFileSync(join(dir, 'kbsync.yaml'), yaml);
  return loadConfigDetailed(join(dir, 'kbsync.yaml'), env);
}

describe('redactConfig', () => {
  it('redacts an apiKey from the environment and never shows it in YAML or JSON', () => {
    const { config, interpolations } = load('target:\n  kind: remote\n  baseUrl: https://${HOST}\n  apiKey: ${KBSYNC_API_KEY}\n', {
      KBSYNC_API_KEY: 'inf_live_0123456789',
      HOST: 'kb.example.org',
    });

    const redacted = redactConfig(config, interpolations);

    expect(redacted.target).toMatchObject({ apiKey: REDACTED, baseUrl: 'https://kb.example.org' });
    expect(JSON.stringify(redacted)).not.toContain('inf_live_0123456789');
    expect(stringify(redacted)).not.toContain('inf_live_0123456789');
    expect(config.target.apiKey).toBe('inf_live_0123456789');
  });

  it('redacts a key read from apiKeyFile, and a literal key, even without interpolation info', () => {
    const fromFile = load('target:\n  kind: remote\n  baseUrl: https://x.org\n  apiKeyFile: key\n', {}, { key: 'file-key-42\n' });
    const literal = load('target:\n  kind: remote\n  baseUrl: https://x.org\n  apiKey: literal-key-7\n', {});

    const a = JSON.stringify(redactConfig(fromFile.config));
    const b = JSON.stringify(redactConfig(literal.config));

    expect(a).not.toContain('file-key-42');
    expect(a).toContain('"apiKeyFile"');
    expect(b).not.toContain('literal-key-7');
  });

  it('redacts any value interpolated from a secret-looking variable, and passwords in URLs', () => {
    const { config, interpolations } = load(
      [
        'sources:',
        '  - name: a',
        '    git: { url: "https://x-access-token:${GH_TOKEN}@github.com/org/a.git" }',
        '  - name: b',
        '    git: { url: "https://${DEPLOY_SECRET}@github.com/org/b.git", ref: "${BRANCH}" }',
        '  - name: c',
        '    git: { url: "https://bob:hunter2@example.org/c.git" }',
      ].join('\n'),
      { GH_TOKEN: 'ghp_tokenvalue', DEPLOY_SECRET: 'deploysecretvalue', BRANCH: 'main' },
    );

    const text = JSON.stringify(redactConfig(config, interpolations));

    expect(text).not.toContain('ghp_tokenvalue');
    expect(text).not.toContain('deploysecretvalue');
    expect(text).not.toContain('hunter2');
    expect(text).toContain('https://bob:[redacted]@example.org/c.git');
    expect(text).toContain('"ref":"main"');
  });

  it('leaves a config without secrets unchanged', () => {
    const { config, interpolations } = load('state: s.db\n', {});

    expect(redactConfig(config, interpolations)).toEqual(JSON.parse(JSON.stringify(config)));
  });
});
