import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configChanges, describeChange, restartNeeded } from '../../src/config/diff.js';
import { loadConfigDetailed, type LoadedConfig } from '../../src/config/load.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Loads each YAML text from the same folder (with docs/ and notes/ in it), as a reload reads the file again. */
function loadAll(env: Record<string, string> | Record<string, string>[], ...texts: string[]): LoadedConfig[] {
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-diff-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'docs'));
  mkdirSync(join(dir, 'notes'));
  return texts.map((text, i) => {
    writeFileSync(join(dir, 'kbsync.yaml'), text);
    return loadConfigDetailed(join(dir, 'kbsync.yaml'), Array.isArray(env) ? (env[i] ?? {}) : env);
  });
}

const changesOf = (a: LoadedConfig, b: LoadedConfig): string[] =>
  configChanges(a.config, b.config, { before: a.interpolations, after: b.interpolations }).map(describeChange);

describe('configChanges', () => {
  it('matches sources by name: order does not count, a source is added or removed whole, or its own keys change', () => {
    const [a, b] = loadAll(
      {},
      'sources:\n  - { name: docs, path: ./docs }\n  - { name: notes, path: ./notes }\n',
      'sources:\n  - { name: notes, path: ./notes, exclude: ["*.tmp"] }\n  - { name: more, path: ./docs }\nbudget:\n  maxCreditsPerDay: 500\n',
    ) as [LoadedConfig, LoadedConfig];

    expect(changesOf(a, b)).toEqual([
      'budget.maxCreditsPerDay: 2000 → 500',
      'sources.docs removed',
      'sources.notes.exclude: [] → ["*.tmp"]',
      'sources.more added',
    ]);
    expect(changesOf(a, a)).toEqual([]);
  });

  it('never shows a secret: an API key, a value from a secret-looking variable, a password in a URL', () => {
    const remote = (key: string, url: string): string =>
      `target:\n  kind: remote\n  baseUrl: ${url}\n  apiKey: ${key}\nsources:\n  - name: g\n    git:\n      url: \${GIT_TOKEN_URL}\n`;
    const [a, b] = loadAll(
      [{ GIT_TOKEN_URL: 'https://tok-one@git.example.org/r.git' }, { GIT_TOKEN_URL: 'https://tok-two@git.example.org/r.git' }],
      remote('key-one-123', 'https://u:pw-one@kb.example.org'),
      remote('key-two-456', 'https://u:pw-two@kb.example.org'),
    );

    const text = changesOf(a as LoadedConfig, b as LoadedConfig).join('\n');

    expect(text).toBe(
      [
        'target.baseUrl (secret, value not shown)',
        'target.apiKey (secret, value not shown)',
        'sources.g.git.url (secret, value not shown)',
      ].join('\n'),
    );
    for (const secret of ['key-one', 'key-two', 'pw-one', 'pw-two', 'tok-one', 'tok-two']) expect(text).not.toContain(secret);
  });
});

describe('restartNeeded', () => {
  it('names what is opened at start; a source added or removed is live, except on a PostgreSQL state', () => {
    const [a, b] = loadAll(
      {},
      'sources:\n  - { name: docs, path: ./docs }\n',
      'state: other.db\nwatch:\n  watcher: chokidar\n  debounceMs: 10\nsources:\n  - { name: docs, path: ./docs }\n  - { name: notes, path: ./notes }\n',
    ) as [LoadedConfig, LoadedConfig];
    const changes = configChanges(a.config, b.config);

    expect(restartNeeded(a.config, changes).map((r) => r.key)).toEqual(['state', 'watch.watcher']);
    const onPostgres = { ...a.config, state: 'postgres://kbsync@db/kbsync' };
    expect(restartNeeded(onPostgres, changes).map((r) => r.key)).toEqual(['state', 'sources.notes', 'watch.watcher']);
  });

  it('a remote target’s new API key is live when the daemon can open the target again; its URL or dataset never is', () => {
    const remote = (key: string, dataset: string): string =>
      `target:\n  kind: remote\n  baseUrl: https://kb.example.org\n  apiKey: ${key}\n  datasetId: "${dataset}"\n`;
    const [a, b, c] = loadAll({}, remote('key-1', '7'), remote('key-2', '7'), remote('key-2', '8')) as [
      LoadedConfig,
      LoadedConfig,
      LoadedConfig,
    ];
    const keys = (x: LoadedConfig, y: LoadedConfig, credentialsLive: boolean): string[] =>
      restartNeeded(x.config, configChanges(x.config, y.config), { credentialsLive }).map((r) => r.key);

    expect(keys(a, b, true)).toEqual([]);
    expect(keys(a, b, false)).toEqual(['target.apiKey']);
    expect(keys(a, c, true)).toEqual(['target.datasetId']);
  });
});
