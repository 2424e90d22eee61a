import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, useTempDirs, type CliRun } from './helpers.js';

/**
 * The options of the sync-side commands, each read back where it should act: the config file `-c`
 * names (a decoy ./kbsync.yaml in the folder would be read if it were ignored), the listing `--all`
 * widens, the one JSON document `--json` prints, and the notes `plan` and `sync` print on stderr.
 * Every command runs in-process against the embedded service, in a fresh temp folder.
 */

const tempDir = useTempDirs();

/** An embedded-target config syncing `./docs` (relative to the config file) as source `name`. */
function config(name: string): string {
  return [
    'target: { kind: embedded, plan: basic, dataDir: .kbsync/service }',
    'state: .kbsync/state.db',
    'sources:',
    `  - { name: ${name}, path: ./docs }`,
    '',
  ].join('\n');
}

/**
 * A folder with two configs: ./kbsync.yaml (the default, a decoy syncing decoy.md) and conf/other.yaml
 * (syncing handbook.md). A command that ignored `-c conf/other.yaml` would read the decoy.
 */
function twoConfigs(): { dir: string; other: string } {
  const dir = tempDir();
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'decoy.md'), '# Decoy\n');
  writeFileSync(join(dir, 'kbsync.yaml'), config('decoy'));
  mkdirSync(join(dir, 'conf', 'docs'), { recursive: true });
  writeFileSync(join(dir, 'conf', 'docs', 'handbook.md'), '# Handbook\nExpenses over 500 EUR need a manager.\n');
  writeFileSync(join(dir, 'conf', 'other.yaml'), config('handbook'));
  return { dir, other: 'conf/other.yaml' };
}

type Report = { summary: Record<string, number>; items: { source: string; path: string; action: string }[] };

function parsed(run: CliRun): Report {
  try {
    return JSON.parse(run.stdout) as Report;
  } catch {
    throw new Error(`no JSON document on stdout (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

/** The `kbsync: ...` note lines of a run's stderr. */
const notesOf = (run: CliRun): string[] => run.stderr.split('\n').filter((line) => line.startsWith('kbsync: '));

describe('-c FILE: each command reads that config, not ./kbsync.yaml', () => {
  it('plan -c FILE --json: plans the sources of FILE', async () => {
    const { dir, other } = twoConfigs();

    const run = await runCli(['plan', '-c', other, '--json'], { cwd: dir });

    expect(run.code).toBe(0);
    expect(parsed(run).items.map((i) => [i.source, i.path, i.action])).toEqual([['handbook', 'handbook.md', 'upload']]);
    // A plan of a new state may bring the state up to date: FILE's state, next to FILE.
    expect(existsSync(join(dir, '.kbsync'))).toBe(false);
  });

  it('sync -c FILE --json: syncs the sources of FILE into its target, with its state next to FILE', async () => {
    const { dir, other } = twoConfigs();

    const run = await runCli(['sync', '-c', other, '--json'], { cwd: dir });

    expect(run.code).toBe(0);
    expect(parsed(run).items.map((i) => [i.source, i.path, i.action])).toEqual([['handbook', 'handbook.md', 'upload']]);
    expect(parsed(run).summary).toMatchObject({ uploaded: 1, creditsSpent: 5 });
    expect(readdirSync(join(dir, 'conf', '.kbsync')).sort()).toEqual(expect.arrayContaining(['service', 'state.db']));
    expect(existsSync(join(dir, '.kbsync'))).toBe(false);
  });

  it('status -c FILE --json: the files tracked by the state of FILE', async () => {
    const { dir, other } = twoConfigs();
    expect((await runCli(['sync', '-c', other], { cwd: dir })).code).toBe(0);

    const run = await runCli(['status', '-c', other, '--json'], { cwd: dir });

    expect(run.code).toBe(0);
    expect(parsed(run).items.map((i) => [i.source, i.path])).toEqual([['handbook', 'handbook.md']]);
  });

  it('explain -c FILE PATH: explains a file of the sources of FILE', async () => {
    const { dir, other } = twoConfigs();

    const run = await runCli(['explain', '-c', other, 'handbook.md'], { cwd: dir });
    const decoy = await runCli(['explain', '-c', other, 'decoy.md'], { cwd: dir });

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^handbook\/handbook\.md\n/);
    expect(run.stdout).toMatch(/decision: +upload: new file\n/);
    expect(decoy.code).toBe(2);
    expect(decoy.stderr).toContain('"decoy.md" is not in any source');
  });

  it('config check -c FILE: checks and prints FILE, resolved', async () => {
    const { dir, other } = twoConfigs();

    const run = await runCli(['config', 'check', '-c', other, '--json'], { cwd: dir });
    const resolved = JSON.parse(run.stdout) as { configPath: string; sources: { name: string; path: string }[] };

    expect(run.code).toBe(0);
    expect(resolved.configPath).toBe(join(dir, 'conf', 'other.yaml'));
    expect(resolved.sources).toEqual([expect.objectContaining({ name: 'handbook', path: join(dir, 'conf', 'docs') })]);
  });
});

describe('--json: one JSON document on stdout instead of the text report', () => {
  it('plan --json, sync --json and status --json each print one JSON document; without --json, text', async () => {
    const { dir, other } = twoConfigs();

    const planText = await runCli(['plan', '-c', other], { cwd: dir });
    const planJson = await runCli(['plan', '-c', other, '--json'], { cwd: dir });
    const syncJson = await runCli(['sync', '-c', other, '--json'], { cwd: dir });
    const statusText = await runCli(['status', '-c', other], { cwd: dir });
    const statusJson = await runCli(['status', '-c', other, '--json'], { cwd: dir });

    expect(() => JSON.parse(planText.stdout) as unknown).toThrow();
    expect(planText.stdout).toMatch(/^upload +5 +handbook\.md +new file$/m);
    expect(parsed(planJson).summary).toMatchObject({ uploaded: 1, creditsPlanned: 5, creditsSpent: 0 });
    expect(parsed(syncJson).summary).toMatchObject({ uploaded: 1, creditsPlanned: 5, creditsSpent: 5 });
    expect(() => JSON.parse(statusText.stdout) as unknown).toThrow();
    expect(statusText.stdout).toMatch(/^tracked: +1 file /m);
    expect(parsed(statusJson).items).toEqual([expect.objectContaining({ source: 'handbook', path: 'handbook.md' })]);
  });
});

describe('--all: the text report lists every item', () => {
  it('plan --all and sync --all list unchanged files and each unsupported file past 50; without it they are counted', async () => {
    const { dir, other } = twoConfigs();
    for (let i = 0; i < 51; i++) writeFileSync(join(dir, 'conf', 'docs', `image-${String(i).padStart(2, '0')}.png`), 'PNG');
    expect((await runCli(['sync', '-c', other], { cwd: dir })).code).toBe(0);

    const plan = await runCli(['plan', '-c', other], { cwd: dir });
    const planAll = await runCli(['plan', '-c', other, '--all'], { cwd: dir });
    const sync = await runCli(['sync', '-c', other], { cwd: dir });
    const syncAll = await runCli(['sync', '-c', other, '--all'], { cwd: dir });

    for (const run of [plan, sync]) {
      expect(run.code).toBe(0);
      expect(run.stdout).not.toMatch(/handbook\.md/);
      expect(run.stdout).not.toMatch(/image-00\.png/);
      expect(run.stdout).toContain('(51 unsupported files not listed: 51 .png; --all lists them)');
      expect(run.stdout).toContain('(1 unchanged file not listed)');
    }
    for (const run of [planAll, syncAll]) {
      expect(run.code).toBe(0);
      // A run's lines start with the outcome ("done  "), a plan's with the action.
      expect(run.stdout).toMatch(/^(done +)?skip:unchanged +0 +handbook\.md +unchanged since last sync/m);
      expect(run.stdout.match(/^(done +)?skip:unsupported +0 +image-\d\d\.png /gm)).toHaveLength(51);
      expect(run.stdout).not.toContain('not listed');
    }
  });
});

describe('plan and sync print the same notes, with --json or without', () => {
  it('a lost state: plan --json and sync --json both say it was rebuilt from the remote listing (stderr), stdout holds only the document', async () => {
    const { dir, other } = twoConfigs();
    expect((await runCli(['sync', '-c', other], { cwd: dir })).code).toBe(0);
    const loseState = (): void => {
      for (const name of readdirSync(join(dir, 'conf', '.kbsync')))
        if (name.startsWith('state.db')) rmSync(join(dir, 'conf', '.kbsync', name));
    };

    loseState();
    const planText = await runCli(['plan', '-c', other], { cwd: dir });
    loseState();
    const planJson = await runCli(['plan', '-c', other, '--json'], { cwd: dir });
    loseState();
    const syncJson = await runCli(['sync', '-c', other, '--json'], { cwd: dir });

    const rebuilt = 'kbsync: state rebuilt from the remote listing: 1 files matched, 0 not ours';
    expect(notesOf(syncJson)).toEqual([rebuilt]);
    expect(notesOf(planJson)).toEqual(notesOf(syncJson));
    expect(notesOf(planText)).toEqual(notesOf(syncJson));
    expect(parsed(planJson).items).toEqual([expect.objectContaining({ path: 'handbook.md', action: 'skip:unchanged' })]);
    expect(parsed(syncJson).summary).toMatchObject({ uploaded: 0, unchanged: 1, creditsSpent: 0 });
  });
});
