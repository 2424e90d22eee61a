import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { request } from 'undici';
import { startDaemon, freePort, useChildren, until, logsOf, type LogLine, untilDaemonReady } from '../../helpers/daemon-children.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace, type Workspace, type WorkspaceConfig } from '../../helpers/e2e-workspace.js';
import { createGitOrigin, GIT_ENV } from '../../helpers/e2e-git.js';
import { isUpload } from '../../helpers/fault-proxy.js';
import type { KbsyncChild } from '../../helpers/kbsync-child.js';

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();

type StatusFile = {
  pid: number;
  ready: boolean;
  counters: { cycles: number };
  config: { reloads: Record<string, number>; last: { outcome: string } | null };
};

function workspace(ds: E2eDataset, config: Partial<WorkspaceConfig> = {}, via?: 'proxy'): Workspace {
  return createWorkspace(suite.temp.make(), {
    baseUrl: via === 'proxy' ? suite.proxy.url : suite.svc.url,
    apiKey: ds.apiKey,
    config: { watch: { debounceMs: 200, probeTimeoutMs: 1000 }, ...config },
  });
}

function watch(ws: Workspace, ...args: string[]): KbsyncChild {
  return startDaemon(children, ws, args, GIT_ENV);
}

function statusFile(ws: Workspace): StatusFile | null {
  const path = `${ws.statePath}.watch.json`;
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as StatusFile) : null;
}

async function ready(ws: Workspace, k: KbsyncChild): Promise<void> {
  await untilDaemonReady(k, `${ws.statePath}.watch.json`);
}

const uploadsOf = (k: KbsyncChild, path: string): LogLine[] =>
  logsOf(k).filter((l) => l.msg === 'file' && l.path === path && l.action === 'upload' && l.outcome === 'done');
const linesWith = (k: KbsyncChild, text: string): LogLine[] => logsOf(k).filter((l) => l.msg.includes(text));
const reloadCycles = (k: KbsyncChild): LogLine[] =>
  logsOf(k).filter((l) => l.msg === 'sync cycle done' && (l.reasons as string[]).includes('reload'));

/** The config as an editor saves it: the new text in a temp file renamed over the old one. */
function saveAtomically(ws: Workspace, text: string): void {
  const temp = join(ws.root, '.kbsync.yaml.swp');
  writeFileSync(temp, text);
  renameSync(temp, ws.configPath);
}

const configText = (ws: Workspace): string => readFileSync(ws.configPath, 'utf8');

describe('kbsync watch reloads its config', () => {
  it('SIGHUP after an edit: the daemon stays, logs what changed, and its next cycle obeys the new exclude and the new source', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    const notes = join(ws.root, 'notes');
    mkdirSync(notes);
    writeFileSync(join(notes, 'n.md'), '# N\n');
    const k = watch(ws);
    await ready(ws, k);

    // The signal comes before the file's own events have been quiet long enough: SIGHUP is what reloads.
    const before = configText(ws);
    ws.configure({
      sources: [
        { name: 'docs', path: './docs', exclude: ['draft-*.md'] },
        { name: 'notes', path: './notes' },
      ],
      budget: { maxCreditsPerRun: 90_000, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 },
    });
    expect(configText(ws)).not.toBe(before);
    k.child.kill('SIGHUP');
    await until('the config reloaded', () => linesWith(k, 'config reloaded').length > 0);
    await until('the cycle under the new config', () => reloadCycles(k).length > 0);
    ws.write('draft-1.md', '# Draft\n');
    ws.write('b.md', '# B\n');
    await until('b.md uploaded', () => uploadsOf(k, 'b.md').length === 1);
    // The new source is watched: a file made in it is synced after its event.
    writeFileSync(join(notes, 'm.md'), '# M\n');
    await until('m.md, new in the new source, uploaded', () => uploadsOf(k, 'm.md').length === 1);

    const reloaded = linesWith(k, 'config reloaded')[0] as LogLine;
    expect(reloaded.trigger).toBe('SIGHUP');
    expect(reloaded.msg).toBe('config reloaded: budget.maxCreditsPerRun, sources.docs.exclude, sources.notes');
    expect(reloaded.changed).toEqual([
      'budget.maxCreditsPerRun: 100000 → 90000',
      'sources.docs.exclude: [] → ["draft-*.md"]',
      'sources.notes added',
    ]);
    expect(uploadsOf(k, 'n.md')).toHaveLength(1);
    expect(uploadsOf(k, 'draft-1.md')).toHaveLength(0);
    expect(k.child.exitCode).toBeNull();
    expect(statusFile(ws)?.config.reloads).toEqual({ applied: 1, refused: 0, failed: 0 });
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
    expect(k.stderrSoFar()).not.toContain(ds.apiKey);
  });

  it('an atomic save of the config (rename over it) is picked up without a signal; a deleted file is logged and the config kept', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);

    const config = JSON.parse(configText(ws)) as { sources: { exclude?: string[] }[] };
    (config.sources[0] as { exclude?: string[] }).exclude = ['secret-*.md'];
    saveAtomically(ws, JSON.stringify(config, null, 2));
    await until('the config reloaded', () => linesWith(k, 'config reloaded').length > 0);
    await until('the cycle under the new config', () => reloadCycles(k).length > 0);
    ws.write('secret-1.md', '# S\n');
    ws.write('c.md', '# C\n');
    await until('c.md uploaded', () => uploadsOf(k, 'c.md').length === 1);

    expect(linesWith(k, 'config reloaded')[0]).toMatchObject({ trigger: 'file', changed: ['sources.docs.exclude: [] → ["secret-*.md"]'] });
    expect(uploadsOf(k, 'secret-1.md')).toHaveLength(0);

    // The file deleted: logged once, and the daemon syncs on under the config it holds.
    rmSync(ws.configPath);
    await until('the deletion logged', () => linesWith(k, 'the config file is gone').length === 1);
    ws.write('secret-2.md', '# S2\n');
    ws.write('d.md', '# D\n');
    await until('d.md uploaded', () => uploadsOf(k, 'd.md').length === 1);
    expect(uploadsOf(k, 'secret-2.md')).toHaveLength(0);
    expect(linesWith(k, 'the config file is gone')[0]?.level).toBe(40);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  });

  it('a broken edit: the daemon runs on, logs each problem with file:line, `status` reports the daemon then the error; the fix is applied', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);
    const good = configText(ws);

    // A YAML syntax error, then a bad field.
    saveAtomically(ws, 'sources:\n  - name: docs\n  path: [\n');
    await until('the YAML error logged', () => linesWith(k, 'config not reloaded').length === 1);
    const broken = good.replace('"debounceMs": 200', '"debounceMs": -5');
    const badLine = broken.split('\n').findIndex((l) => l.includes('"debounceMs": -5')) + 1;
    saveAtomically(ws, broken);
    await until('the bad field logged', () => linesWith(k, 'config not reloaded').length === 2);
    const [yamlError, fieldError] = linesWith(k, 'config not reloaded') as [LogLine, LogLine];
    expect(yamlError.level).toBe(50);
    expect(yamlError.errors).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${ws.configPath}:\\d+: YAML syntax`))]));
    expect(fieldError.errors).toEqual([`${ws.configPath}:${badLine}: watch.debounceMs: must be at least 0, got -5`]);
    expect(fieldError.msg).toContain('still running on the previous config');

    // Still on the old config: a change is synced.
    ws.write('b.md', '# B\n');
    await until('b.md uploaded while the config is broken', () => uploadsOf(k, 'b.md').length === 1);
    await until('the status file says the reload failed', () => statusFile(ws)?.config.reloads.failed === 2);
    const status = await ws.run('status');
    expect(status.code).toBe(2);
    expect(status.stdout).toMatch(new RegExp(`^daemon: +running \\(pid ${k.child.pid}`));
    expect(status.stdout).toMatch(/daemon config reload: .*\(file\): failed, running on the previous config: .*watch\.debounceMs/);
    expect(status.stderr).toContain(`kbsync.yaml:${badLine}: watch.debounceMs: must be at least 0, got -5`);
    const json = await ws.run('status', '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      daemon: { pid: k.child.pid, ready: true },
      error: { code: 'config_invalid', problems: [{ line: badLine, path: 'watch.debounceMs' }] },
    });

    // The fix: debounce changed from the running 200 to 100, applied.
    saveAtomically(ws, good.replace('"debounceMs": 200', '"debounceMs": 100'));
    await until('the fix applied', () => linesWith(k, 'config reloaded').length === 1);
    expect(linesWith(k, 'config reloaded')[0]?.changed).toEqual(['watch.debounceMs: 200 → 100']);
    expect(k.child.exitCode).toBeNull();
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  });

  it('a broken edit undone (the file back to the config in force) is logged and clears the failure in status', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);
    const good = configText(ws);

    saveAtomically(ws, good.replace('"debounceMs": 200', '"debounceMs": [200'));
    await until('the YAML error logged', () => linesWith(k, 'config not reloaded').length === 1);
    saveAtomically(ws, good);
    await until('the fix logged', () => linesWith(k, 'config reloaded: nothing changed').length === 1, 10_000);
    await until('the status file no longer says failed', () => statusFile(ws)?.config.last?.outcome === 'unchanged');
    expect((await ws.run('status')).stdout).not.toMatch(/daemon config reload: .*failed/);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  });

  it('a reload that makes new watchers does not log again the skips the cycle before logged', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    ws.write('empty.md', '');
    const k = watch(ws);
    await ready(ws, k);
    const emptyLines = (): LogLine[] => logsOf(k).filter((l) => l.msg === 'file' && l.path === 'empty.md');
    // The status file can say ready before the log line has crossed the pipe.
    await until('the first cycle logs the skip', () => emptyLines().length === 1);

    saveAtomically(ws, configText(ws).replace('"debounceMs": 200', '"debounceMs": 100'));
    await until('the reload cycle', () => reloadCycles(k).length === 1);

    expect(emptyLines()).toHaveLength(1);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  });

  it('a change that needs a restart (the dataset) is refused whole and says so', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    const port = await freePort();
    const k = watch(ws, '--http', `127.0.0.1:${port}`);
    await ready(ws, k);

    ws.configure({
      target: { kind: 'remote', baseUrl: suite.svc.url, apiKey: ds.apiKey, plan: 'basic', datasetId: '424242' },
      sources: [{ name: 'docs', path: './docs', exclude: ['x-*.md'] }],
    });
    k.child.kill('SIGHUP');
    await until('the refusal logged', () => linesWith(k, 'config not reloaded').length > 0);
    const refusal = linesWith(k, 'config not reloaded')[0] as LogLine;
    expect(refusal.msg).toContain('target.datasetId changed (the target (service, dataset) is opened at start): restart kbsync watch');
    expect(refusal.restartNeeded).toEqual(['target.datasetId']);
    expect(refusal.changed).toEqual(['target.datasetId: (unset) → "424242"', 'sources.docs.exclude: [] → ["x-*.md"]']);

    // Kept whole: the exclude that came with the dataset is not in force either.
    ws.write('x-1.md', '# X\n');
    await until('x-1.md uploaded under the old config', () => uploadsOf(k, 'x-1.md').length === 1);
    expect(statusFile(ws)?.config.reloads).toEqual({ applied: 0, refused: 1, failed: 0 });
    const metrics = await (await request(`http://127.0.0.1:${port}/metrics`)).body.text();
    expect(metrics).toContain('kbsync_config_reloads_total{outcome="refused"} 1');
    expect(metrics).toContain('kbsync_config_reloads_total{outcome="applied"} 0');
    k.child.kill('SIGTERM');
    const exit = await k.exited;
    expect(exit.code).toBe(0);
    expect(exit.stderr).not.toContain(ds.apiKey);
  });

  it('a reload while a cycle runs waits for it: that cycle ends on the old config, the new one applies after', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, {}, 'proxy');
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);

    // b.md's upload is held at the proxy; meanwhile the config changes and SIGHUP comes.
    let held = false;
    suite.proxy.setHooks({
      onRequest: async (req) => {
        if (!isUpload(req) || held) return { kind: 'forward' };
        held = true;
        ws.configure({ budget: { maxCreditsPerRun: 90_000, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 } });
        k.child.kill('SIGHUP');
        await until('the reload waiting', () => linesWith(k, 'applied when the sync cycle running ends').length === 1);
        await new Promise((r) => setTimeout(r, 300));
        return { kind: 'forward' };
      },
    });
    ws.write('b.md', '# B\n');
    await until('the config reloaded', () => linesWith(k, 'config reloaded').length === 1);
    suite.proxy.setHooks({});

    const lines = logsOf(k);
    const at = (pred: (l: LogLine) => boolean): number => lines.findIndex(pred);
    const waiting = at((l) => l.msg === 'config change: applied when the sync cycle running ends');
    const cycleEnd = at((l) => l.msg === 'sync cycle done' && (l.reasons as string[]).includes('changes'));
    const reloaded = at((l) => l.msg.startsWith('config reloaded'));
    expect(waiting).toBeGreaterThan(0);
    expect(cycleEnd).toBeGreaterThan(waiting);
    expect(reloaded).toBeGreaterThan(cycleEnd);
    expect(lines[reloaded]?.changed).toEqual(['budget.maxCreditsPerRun: 100000 → 90000']);
    expect(uploadsOf(k, 'b.md')).toHaveLength(1);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  });

  it('a new API key for the remote target applies from the next cycle, and is never logged', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);
    const target = (apiKey: string): Record<string, unknown> => ({ kind: 'remote', baseUrl: suite.svc.url, apiKey, plan: 'basic' });

    // A key the service refuses: the next cycle is refused with it, so the new key is the one in use.
    const wrongKey = 'kb_wrong_key_0123456789abcdef';
    ws.configure({ target: target(wrongKey) });
    k.child.kill('SIGHUP');
    await until('the new key in force', () => linesWith(k, 'config reloaded').length === 1);
    ws.write('b.md', '# B\n');
    await until('the cycle refused with the wrong key', () =>
      logsOf(k).some((l) => Number(l.level) >= 40 && /401|unauthori[sz]ed|API key/i.test(JSON.stringify(l))),
    );
    expect(uploadsOf(k, 'b.md')).toHaveLength(0);

    // The right key again: b.md goes up.
    ws.configure({ target: target(ds.apiKey) });
    k.child.kill('SIGHUP');
    await until('b.md uploaded with the right key', () => uploadsOf(k, 'b.md').length === 1, 60_000);

    expect(linesWith(k, 'config reloaded').map((l) => l.changed)).toEqual([
      ['target.apiKey (secret, value not shown)'],
      ['target.apiKey (secret, value not shown)'],
    ]);
    k.child.kill('SIGTERM');
    const exit = await k.exited;
    expect(exit.code).toBe(0);
    expect(exit.stderr).not.toContain(wrongKey);
    expect(exit.stderr).not.toContain(ds.apiKey);
  }, 90_000);

  it('a git source added by a reload is synced at once, then polled', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    const origin = createGitOrigin(suite.temp.make(), { 'guide.md': '# Guide\n' });
    const k = watch(ws);
    await ready(ws, k);

    ws.configure({
      sources: [
        { name: 'docs', path: './docs' },
        { name: 'repo', git: { url: origin.bare, ref: 'main', pollSeconds: 1 } },
      ],
    });
    k.child.kill('SIGHUP');
    await until('guide.md uploaded by the reload cycle', () => uploadsOf(k, 'guide.md').length === 1);
    origin.commit({ 'news.md': '# News\n' }, 'add news');
    await until('news.md uploaded after a poll', () => uploadsOf(k, 'news.md').length === 1);

    expect(linesWith(k, 'config reloaded')[0]?.changed).toEqual(['sources.repo added']);
    expect(reloadCycles(k)[0]?.uploaded).toBe(1);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  });
});
