import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });

/** `kbsync ARGS` as a child process in `cwd` (no -c), HOME as given, to its end. */
const kbsync = (cwd: string, home: string, ...args: string[]) => spawnKbsync(args, cwd, { HOME: home }).exited;

describe('the config file without -c: the nearest kbsync.yaml from the working folder up', () => {
  it('sync and status from a subfolder of the source use the kbsync.yaml above it, its paths relative to it', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
    ws.write('a.md', '# A\n');
    ws.write('deep/er/b.md', '# B\n');
    const sub = join(ws.docs, 'deep', 'er');

    const sync = await kbsync(sub, dirname(ws.root), 'sync');
    const status = await kbsync(sub, dirname(ws.root), 'status', '--json');

    expect(sync.code, sync.stderr).toBe(0);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'deep/er/b.md']);
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { tracked: { files: number } }).tracked.files).toBe(2);
  });

  it('none found: exit 2, naming every folder searched, up to $HOME; a kbsync.yaml above $HOME is not taken', async () => {
    const root = suite.temp.make();
    const home = join(root, 'home');
    const cwd = join(home, 'project', 'notes');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(root, 'kbsync.yaml'), 'not: a config of this user\n');

    const run = await kbsync(cwd, home, 'status');

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `kbsync: no kbsync.yaml in ${cwd} or a folder above it, up to ${home} ($HOME) (looked in ${cwd}, ${join(home, 'project')}, ${home})`,
    );
    expect(run.stderr).toContain('Run `kbsync init` to write a starter file, or pass `-c FILE`.');
  });

  it('-c still names the file, and init writes to the working folder, not to a kbsync.yaml found above', async () => {
    const root = suite.temp.make();
    const cwd = join(root, 'sub');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(root, 'kbsync.yaml'), 'not: valid\n');

    const check = await kbsync(cwd, root, 'config', 'check');
    const named = await kbsync(cwd, root, 'config', 'check', '-c', 'missing.yaml');
    const init = await kbsync(cwd, root, 'init');

    expect(check.code).toBe(2);
    expect(check.stderr).toContain('kbsync.yaml:1: not: unknown key');
    expect(named.stderr).toContain(`no config file at ${join(cwd, 'missing.yaml')}`);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('wrote ./kbsync.yaml');
    expect((await kbsync(cwd, root, 'config', 'check')).code).toBe(0);
  });
});
