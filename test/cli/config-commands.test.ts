import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { STARTER_CONFIG } from '../../src/config/starter.js';
import { runCli, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();

describe('kbsync init', () => {
  it('writes the starter config and a docs folder, and config check then passes', async () => {
    const dir = tempDir();

    const init = await runCli(['init'], { cwd: dir });
    const check = await runCli(['config', 'check'], { cwd: dir });

    expect(init).toMatchObject({ code: 0, stderr: '' });
    expect(init.stdout).toContain('wrote ./kbsync.yaml');
    expect(init.stdout).toContain('created docs/');
    const written = readFileSync(join(dir, 'kbsync.yaml'), 'utf8');
    const [modeline, ...rest] = written.split('\n');
    expect(rest.join('\n')).toBe(STARTER_CONFIG);
    // The first line names the JSON Schema for editors, as a file that exists.
    const schemaUrl = /^# yaml-language-server: \$schema=(file:\/\/\S+)$/.exec(modeline ?? '')?.[1];
    expect(schemaUrl, modeline).toBeDefined();
    expect(JSON.parse(readFileSync(fileURLToPath(schemaUrl as string), 'utf8'))).toMatchObject({ title: 'kbsync.yaml' });
    expect(existsSync(join(dir, 'docs'))).toBe(true);
    expect(check.stderr).toBe('');
    expect(check.code).toBe(0);
    const printed = parse(check.stdout) as { target: { kind: string; dataDir: string }; sources: { name: string; path: string }[] };
    expect(printed.target.kind).toBe('embedded');
    expect(printed.target.dataDir).toBe(join(dir, '.kbsync/service'));
    expect(printed.sources).toEqual([
      {
        name: 'docs',
        path: join(dir, 'docs'),
        include: ['**/*'],
        exclude: [],
        followSymlinks: false,
        convert: ['pdf', 'pptx', 'doc', 'odt', 'ods', 'odp', 'rtf', 'epub'],
      },
    ]);
  });

  it('refuses to overwrite without --force, and overwrites with it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'kbsync.yaml'), 'state: mine.db\n');

    const refused = await runCli(['init'], { cwd: dir });
    const forced = await runCli(['init', '--force'], { cwd: dir });

    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('./kbsync.yaml already exists; use --force to overwrite it');
    expect(forced.code).toBe(0);
    expect(readFileSync(join(dir, 'kbsync.yaml'), 'utf8')).toMatch(/^# yaml-language-server: .*\n# kbsync configuration/);
  });

  it('writes to -c FILE, creating its folder, and leaves an existing docs folder alone', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'kb/docs'), { recursive: true });
    writeFileSync(join(dir, 'kb/docs/readme.md'), '# hi\n');

    const init = await runCli(['init', '-c', 'kb/sync.yaml'], { cwd: dir });
    const check = await runCli(['config', 'check', '--config', 'kb/sync.yaml'], { cwd: dir });

    expect(init.code).toBe(0);
    expect(init.stdout).not.toContain('created');
    expect(readFileSync(join(dir, 'kb/docs/readme.md'), 'utf8')).toBe('# hi\n');
    expect(check.code).toBe(0);
  });
});

describe('kbsync config check', () => {
  it('prints the resolved config as JSON with --json, secrets redacted', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'docs'));
    writeFileSync(
      join(dir, 'kbsync.yaml'),
      'target:\n  kind: remote\n  baseUrl: https://kb.example.org\n  apiKey: ${KBSYNC_API_KEY}\nsources:\n  - { name: docs, path: docs }\n',
    );

    const run = await runCli(['config', 'check', '--json'], { cwd: dir, env: { KBSYNC_API_KEY: 'inf_live_supersecret' } });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toContain('inf_live_supersecret');
    const printed = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({
      configPath: join(dir, 'kbsync.yaml'),
      baseDir: dir,
      target: { kind: 'remote', baseUrl: 'https://kb.example.org', apiKey: '[redacted]', plan: 'basic' },
      state: join(dir, '.kbsync/state.db'),
      budget: { maxCreditsPerRun: 500, maxCreditsPerDay: 2000, maxCreditsPerMonth: 20000 },
      sources: [{ name: 'docs', path: join(dir, 'docs') }],
    });
  });

  it('never shows the key in the YAML output either', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'kbsync.yaml'), 'target:\n  kind: remote\n  baseUrl: https://kb.example.org\n  apiKey: literal-key-123\n');

    const run = await runCli(['config', 'check'], { cwd: dir });

    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('literal-key-123');
    expect(run.stdout).toContain('apiKey: "[redacted]"');
  });

  it('exits 2 and prints every problem, one per line, on stderr', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'kbsync.yaml'),
      ['target:', '  kind: remote', 'budget:', '  maxCreditsPerRun: -1', 'sources:', '  - name: a', '    path: ./nope', 'uplod: {}'].join(
        '\n',
      ),
    );

    const run = await runCli(['config', 'check'], { cwd: dir });

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')).toEqual([
      'kbsync.yaml:1: target.baseUrl: required when target.kind is remote',
      'kbsync.yaml:1: target.apiKey: required when target.kind is remote (or set target.apiKeyFile)',
      'kbsync.yaml:4: budget.maxCreditsPerRun: must be at least 0, got -1',
      `kbsync.yaml:7: sources[0].path: no such directory (looked for ${join(dir, 'nope')})`,
      'kbsync.yaml:8: uplod: unknown key (did you mean "upload"?)',
      'kbsync: 5 problems in kbsync.yaml (keys: docs/config.md; re-check with "kbsync config check")',
      '',
    ]);
  });

  it('with --json, also prints the problems as one JSON document on stdout', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'kbsync.yaml'), 'watch:\n  debounceMs: soon\n');

    const run = await runCli(['config', 'check', '--json'], { cwd: dir });

    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({
      error: {
        code: 'config_invalid',
        exitCode: 2,
        file: 'kbsync.yaml',
        message: expect.any(String),
        problems: [{ path: 'watch.debounceMs', line: 2, message: 'expected a number, got "soon"' }],
      },
    });
    expect(run.stderr).toContain('kbsync.yaml:2: watch.debounceMs: expected a number, got "soon"');
  });

  it('exits 2 with a hint to run kbsync init when there is no config file', async () => {
    const dir = tempDir();

    const run = await runCli(['config', 'check'], { cwd: dir });

    expect(run.code).toBe(2);
    // No HOME in this environment: every folder up to the root is searched.
    const searched = [dir];
    while (dirname(searched[searched.length - 1] as string) !== searched[searched.length - 1])
      searched.push(dirname(searched[searched.length - 1] as string));
    expect(run.stderr).toBe(
      `kbsync: no kbsync.yaml in ${dir} or a folder above it, up to the file-system root (looked in ${searched.join(', ')})\n` +
        '  Run `kbsync init` to write a starter file, or pass `-c FILE`.\n',
    );
  });
});
