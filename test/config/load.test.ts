import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../src/shared/errors.js';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { redactConfig } from '../../src/config/redact.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temp folder with `kbsync.yaml` holding `yaml`, plus the given folders and files. */
function configDir(
  yaml: string,
  extra: { dirs?: string[]; files?: Record<string, { content: string; mode: number }> } = {},
): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-config-'));
  dirs.push(dir);
  for (const d of extra.dirs ?? []) mkdirSync(join(dir, d), { recursive: true });
  for (const [name, f] of Object.entries(extra.files ?? {})) {
    writeFileSync(join(dir, name), f.content);
    chmodSync(join(dir, name), f.mode);
  }
  const file = join(dir, 'kbsync.yaml');
  writeFileSync(file, yaml);
  return { dir, file };
}

/** The problem lines of the ConfigError that loading `file` throws. */
function problemLines(file: string, env: Record<string, string> = {}): string[] {
  try {
    loadConfig(file, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems.map((p) => `${p.line}: ${p.path}: ${p.message}`);
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig: every problem at once, with its line', () => {
  it('reports unknown key, wrong type, missing folder, duplicate name, path+git, remote without baseUrl and a 0644 key file together', () => {
    const { dir, file } = configDir(
      [
        'target:', //                                     1
        '  kind: remote', //                              2
        '  plan: basic', //                               3
        '  apiKeyFile: ./key.txt', //                     4
        '  dialect:', //                                  5
        '    authHeadr: X-API-Key', //                    6
        'budget:', //                                     7
        '  maxCreditsPerRun: lots', //                    8
        'sources:', //                                    9
        '  - name: docs', //                              10
        '    path: ./docs', //                            11
        '  - name: docs', //                              12
        '    path: ./missing', //                         13
        '  - name: both', //                              14
        '    path: ./docs', //                            15
        '    git: { url: "https://example.org/x.git" }', // 16
      ].join('\n'),
      { dirs: ['docs'], files: { 'key.txt': { content: 'k-123\n', mode: 0o644 } } },
    );

    const lines = problemLines(file);

    expect(lines).toEqual([
      '1: target.baseUrl: required when target.kind is remote',
      `4: target.apiKeyFile: ${join(dir, 'key.txt')} is readable by other users (mode 0644); run: chmod 600 ${join(dir, 'key.txt')}`,
      '6: target.dialect.authHeadr: unknown key (did you mean "authHeader"?)',
      '8: budget.maxCreditsPerRun: expected a number, got "lots"',
      '12: sources[1].name: duplicate source name (also sources[0].name)',
      `13: sources[1].path: no such directory (looked for ${join(dir, 'missing')})`,
      '14: sources[2]: give exactly one of "path" or "git"',
    ]);
  });

  it('refuses a source named only with dots, which would name a folder above its git checkout', () => {
    const { file } = configDir(
      [
        'target: { kind: embedded }', //                  1
        'sources:', //                                    2
        '  - name: ".."', //                              3
        '    git: { url: "https://example.org/x.git" }', // 4
        '  - name: "."', //                               5
        '    path: ./docs', //                            6
        '  - name: v1.2', //                              7
        '    path: ./docs', //                            8
      ].join('\n'),
      { dirs: ['docs'] },
    );

    expect(problemLines(file)).toEqual([
      '3: sources[0].name: a name of dots only ("." or "..") would name a folder above the checkout; use letters or digits too',
      '5: sources[1].name: a name of dots only ("." or "..") would name a folder above the checkout; use letters or digits too',
    ]);
  });

  it('formats each problem as file:line: path: message, with the base name the user gave', () => {
    const { file } = configDir('sources:\n  - name: docs\n    path: ./nope\n');

    let error: unknown;
    try {
      loadConfig(file, {});
    } catch (err) {
      error = err;
    }

    expect(isKbsyncError(error, 'config_invalid')).toBe(true);
    expect((error as ConfigError).message).toMatch(
      /^1 problem in kbsync\.yaml:\nkbsync\.yaml:3: sources\[0\]\.path: no such directory \(looked for .*nope\)$/,
    );
  });

  it.each([
    [
      'an unknown top-level key without a close match lists the known keys',
      'target: {}\ncolour: red\n',
      ['2: colour: unknown key (known keys: target, state, budget, convert, sources, upload, reindex, watch, limits)'],
    ],
    ['a close unknown key gets a hint', 'budgt:\n  maxCreditsPerRun: 5\n', ['1: budgt: unknown key (did you mean "budget"?)']],
    ['an enum typo gets a hint', 'target:\n  kind: remot\n', ['2: target.kind: must be one of: embedded, remote (did you mean "remote"?)']],
    ['a fraction where a whole number goes', 'upload:\n  concurrency: 1.5\n', ['2: upload.concurrency: expected a whole number, got 1.5']],
    ['a number out of range', 'upload:\n  concurrency: 100\n', ['2: upload.concurrency: must be at most 64, got 100']],
    ['a missing required key points at its parent', 'sources:\n  - path: ./docs\n', ['2: sources[0].name: required']],
    [
      'a non-URL baseUrl',
      'target:\n  kind: remote\n  apiKey: k\n  baseUrl: ftp://x\n',
      ['4: target.baseUrl: must be an http:// or https:// URL, got "ftp://x"'],
    ],
    [
      'apiKey and apiKeyFile together',
      'target:\n  kind: remote\n  baseUrl: https://x.org\n  apiKey: k\n  apiKeyFile: ./k\n',
      ['5: target.apiKeyFile: give apiKey or apiKeyFile, not both', expect.stringMatching(/^5: target\.apiKeyFile: no such file/)],
    ],
    [
      'remote without any key',
      'target:\n  kind: remote\n  baseUrl: https://x.org\n',
      ['1: target.apiKey: required when target.kind is remote (or set target.apiKeyFile)'],
    ],
    ['a list where a mapping goes', 'budget: [1, 2]\n', ['1: budget: expected a mapping (key: value lines), got a list']],
    ['the whole file is a list', '- a\n- b\n', ['1: : expected a mapping (key: value lines), got a list']],
    [
      'a schedule of 3 fields',
      'watch:\n  schedule: "* * *"\n',
      ['2: watch.schedule: a cron expression of 5 fields (minute hour day-of-month month day-of-week, in UTC), got 3 in "* * *"'],
    ],
    [
      'a schedule with a minute out of range',
      'watch:\n  schedule: "61 * * * *"\n',
      ['2: watch.schedule: not a cron expression: Invalid value for minute: 61'],
    ],
    [
      'a webhook secret that is not whsec_ base64, not echoed',
      'watch:\n  webhookSecret: hunter2!\n',
      [
        '2: watch.webhookSecret: a Standard Webhooks secret: `whsec_` followed by base64 (the `secret` the service returned when the webhook was created)',
      ],
    ],
  ])('%s', (_name, yaml, expected) => {
    const { file } = configDir(yaml, { dirs: ['docs'] });

    expect(problemLines(file)).toEqual(expected);
  });

  it('never echoes a secret value in a problem', () => {
    const { file } = configDir('target:\n  kind: remote\n  baseUrl: https://x.org\n  apiKey: 987654321\n');

    expect(problemLines(file)).toEqual(['4: target.apiKey: expected a string']);
  });

  it('reports YAML syntax errors with their line', () => {
    const { file } = configDir('target:\n  kind: embedded\n\tplan: basic\n');

    expect(problemLines(file)).toEqual(['3: : YAML syntax: Tabs are not allowed as indentation']);
  });

  it('reports an unclosed bracket at the last line, not past the end', () => {
    const { file } = configDir('target:\n  kind: embedded\nsources: [a, b\n');

    expect(problemLines(file)).toHaveLength(1);
    expect(problemLines(file)[0]).toMatch(/^3: : YAML syntax: /);
  });

  it('reports an unclosed bracket mid-file once, at the line that opens it, not the cascade after it', () => {
    const { file } = configDir(
      'target:\n  kind: embedded\nwatch:\n  debounceMs: [800\n  rescanMinutes: 60\n  backend: auto\nstate: a.db\n',
    );

    expect(problemLines(file)).toEqual([
      '4: : YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ] (the [ on this line is not closed)',
    ]);
  });

  it('reports duplicate keys as a YAML error', () => {
    const { file } = configDir('state: a.db\nstate: b.db\n');

    expect(problemLines(file)).toEqual(['2: : YAML syntax: Map keys must be unique']);
  });

  it('throws config_not_found naming the path when the file is missing', () => {
    let error: unknown;
    try {
      loadConfig('/nonexistent/kbsync.yaml', {});
    } catch (err) {
      error = err;
    }

    expect(isKbsyncError(error, 'config_not_found')).toBe(true);
    expect((error as Error).message).toBe('no config file at /nonexistent/kbsync.yaml');
  });
});

describe('loadConfig: interpolation', () => {
  it('reports an unset variable with its name and line, and nothing else about that value', () => {
    const { file } = configDir('target:\n  kind: remote\n  baseUrl: https://x.org\n  apiKey: ${KBSYNC_API_KEY}\n');

    expect(problemLines(file, {})).toEqual([
      '4: target.apiKey: environment variable KBSYNC_API_KEY is not set (use ${KBSYNC_API_KEY:-default} for a default)',
    ]);
  });

  it('expands variables and defaults; an unquoted result is typed as YAML would type it, a quoted one stays text', () => {
    const { file } = configDir(
      [
        'target:',
        '  kind: ${KIND:-remote}',
        '  baseUrl: https://${HOST}/base',
        '  apiKey: ${KBSYNC_API_KEY}',
        '  datasetId: "${DATASET:-42}"',
        'budget:',
        '  maxCreditsPerRun: ${RUN_CAP:-50}',
        'limits:',
        '  maxFileBytes: ${MAX_BYTES:-null}',
        'state: $${literal}/state.db',
      ].join('\n'),
    );

    const config = loadConfig(file, { HOST: 'kb.example.org', KBSYNC_API_KEY: 'secret-1' });

    expect(config.target).toMatchObject({ kind: 'remote', baseUrl: 'https://kb.example.org/base', apiKey: 'secret-1', datasetId: '42' });
    expect(config.budget.maxCreditsPerRun).toBe(50);
    expect(config.limits.maxFileBytes).toBeNull();
    expect(config.state).toBe(join(file, '..', '${literal}', 'state.db'));
  });

  it('reads watch.webhookSecret from the environment, and the printable config redacts it', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const { file } = configDir('watch:\n  webhookSecret: ${KBSYNC_WEBHOOK_SECRET}\n');

    const config = loadConfig(file, { KBSYNC_WEBHOOK_SECRET: secret });

    expect(config.watch.webhookSecret).toBe(secret);
    expect(JSON.stringify(redactConfig(config))).not.toContain(secret.slice(6, 20));
    expect(redactConfig(config)).toMatchObject({ watch: { webhookSecret: '[redacted]' } });
  });

  it('does not interpolate comments or keys', () => {
    const { file } = configDir('# apiKey: ${NOT_SET}\nstate: x.db\n');

    expect(loadConfig(file, {}).state).toBe(join(file, '..', 'x.db'));
  });
});

describe('loadConfig: the resolved config', () => {
  it('applies defaults to an empty file', () => {
    const { dir, file } = configDir('');

    const config = loadConfig(file, {});

    expect(config).toEqual({
      configPath: file,
      baseDir: dir,
      target: {
        kind: 'embedded',
        plan: 'basic',
        dataDir: join(dir, '.kbsync/service'),
        startCredits: 1000,
        dialect: { v1Prefix: '/api/v1/ext', v2Prefix: '/api/v2/ext', authHeader: 'X-API-Key', uploadField: 'file' },
        uploadCost: { base: 5, perMiB: 1, includedMiB: 5 },
      },
      state: join(dir, '.kbsync/state.db'),
      budget: { maxCreditsPerRun: 500, maxCreditsPerDay: 2000, maxCreditsPerMonth: 20000 },
      convert: [],
      sources: [],
      upload: { concurrency: 4, requestsPerSecond: 5, maxRetryAfterSeconds: 60, maxReprocessAttempts: 2 },
      reindex: { minChangedFiles: 20 },
      watch: {
        debounceMs: 1500,
        rescanMinutes: 60,
        backend: 'auto',
        watcher: 'node',
        pollIntervalMs: 1000,
        probeTimeoutMs: 2000,
        shutdownGraceSeconds: 10,
        schedule: null,
        webhookSecret: null,
        httpToken: null,
      },
      limits: { maxFileBytes: null, convertSeconds: 120, convertMemoryMb: 512 },
    });
  });

  it('treats a section whose lines are all commented out as absent', () => {
    const { file } = configDir('budget:\n  # maxCreditsPerRun: 5\ntarget:\n  dialect:\nsources:\n');

    const config = loadConfig(file, {});

    expect(config.budget.maxCreditsPerRun).toBe(500);
    expect(config.target.dialect.authHeader).toBe('X-API-Key');
    expect(config.sources).toEqual([]);
  });

  it('resolves relative paths against the config folder and reads a 0600 key file', () => {
    const { dir, file } = configDir(
      [
        'target:',
        '  kind: remote',
        '  baseUrl: https://kb.example.org',
        '  apiKeyFile: secrets/key',
        '  datasetId: 7519',
        '  dataDir: data',
        'state: ../elsewhere/state.db',
        'sources:',
        '  - name: docs',
        '    path: docs',
        '  - name: repo',
        '    git: { url: ../repo.git }',
        '  - name: remote',
        '    git: { url: "https://example.org/handbook.git", ref: main }',
      ].join('\n'),
      { dirs: ['docs', 'secrets'] },
    );
    writeFileSync(join(dir, 'secrets/key'), '  inf_key_abc \n', { mode: 0o600 });

    const config = loadConfig(file, {});

    expect(config.target.apiKey).toBe('inf_key_abc');
    expect(config.target.apiKeyFile).toBe(join(dir, 'secrets/key'));
    expect(config.target.datasetId).toBe('7519');
    expect(config.target.dataDir).toBe(join(dir, 'data'));
    expect(config.state).toBe(join(dir, '../elsewhere/state.db'));
    expect(config.sources.map((s) => s.path ?? s.git?.url)).toEqual([
      join(dir, 'docs'),
      join(dir, '../repo.git'),
      'https://example.org/handbook.git',
    ]);
  });

  it('accepts a key file stricter than 0600 and refuses an empty one', () => {
    const { dir, file } = configDir('target:\n  kind: remote\n  baseUrl: https://x.org\n  apiKeyFile: key\n');
    writeFileSync(join(dir, 'key'), 'abc', { mode: 0o400 });

    expect(loadConfig(file, {}).target.apiKey).toBe('abc');

    chmodSync(join(dir, 'key'), 0o600);
    writeFileSync(join(dir, 'key'), '\n');
    expect(problemLines(file)).toEqual([`4: target.apiKeyFile: ${join(dir, 'key')} is empty`]);
  });

  it('expands ~/ against HOME', () => {
    const { dir, file } = configDir('state: ~/kb/state.db\n');

    expect(loadConfig(file, { HOME: dir }).state).toBe(join(dir, 'kb/state.db'));
  });
});

describe('loadConfig: a PostgreSQL state', () => {
  it('keeps a postgres:// URL as it is (not a path), from the file or from ${KBSYNC_STATE_URL}', () => {
    const url = 'postgres://kb:secret@db.internal:5432/kbsync';
    expect(loadConfig(configDir(`state: ${url}\n`).file, {}).state).toBe(url);
    const { file } = configDir('state: ${KBSYNC_STATE_URL}\n');
    expect(loadConfig(file, { KBSYNC_STATE_URL: 'postgresql://kb@db/kb' }).state).toBe('postgresql://kb@db/kb');
    expect(JSON.stringify(redactConfig(loadConfig(configDir(`state: ${url}\n`).file, {})))).not.toContain('secret');
  });

  it('refuses a URL of another scheme, and a PostgreSQL URL without a host, naming the line', () => {
    expect(problemLines(configDir('target:\n  kind: embedded\nstate: mysql://db/kb\n').file)).toEqual([
      '3: state: "mysql://" is not a state kbsync can keep: use a file path (the SQLite state, e.g. .kbsync/state.db) or postgres://USER@HOST:PORT/DATABASE',
    ]);
    expect(problemLines(configDir('state: postgres:///kb\n').file)).toEqual([
      '1: state: a PostgreSQL URL needs a host: postgres://USER@HOST:PORT/DATABASE',
    ]);
  });
});
