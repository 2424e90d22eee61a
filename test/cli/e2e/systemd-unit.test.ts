import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDist, REPO_ROOT } from '../../helpers/build-dist.js';
import { logsOf, until, useChildren } from '../../helpers/daemon-children.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';

/** The example systemd unit: its directives, `Key=value` lines outside comments. */
const unit = readFileSync(join(REPO_ROOT, 'examples/systemd/kbsync-watch.service'), 'utf8');
const directive = (key: string): string | undefined =>
  unit
    .split('\n')
    .find((l) => l.startsWith(`${key}=`))
    ?.slice(key.length + 1);

const temp = createTempDirs();
afterAll(() => temp.cleanup());
const children = useChildren();

describe('examples/systemd/kbsync-watch.service', () => {
  it('starts kbsync watch, and its ExecReload makes the running daemon read its config again (it stays up)', async () => {
    await ensureDist();
    expect(directive('ExecStart')).toMatch(/ kbsync watch -c \S+/);
    const reload = directive('ExecReload');
    expect(reload).toBeDefined();

    // A daemon on the embedded service, reloaded by the unit's command with $MAINPID as systemd sets it
    // (the config unchanged: only a signal logs a reload that changed nothing).
    const root = temp.make();
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'a.md'), '# A\n');
    writeFileSync(join(root, 'kbsync.yaml'), 'sources:\n  - name: docs\n    path: ./docs\nwatch:\n  backend: polling\n');
    const k = spawnKbsync(['watch', '-c', 'kbsync.yaml'], root);
    children.push(k);
    await until('the first sync', () => logsOf(k).some((l) => l.msg === 'sync cycle done'), 60_000);
    const run = spawnSync('sh', ['-c', reload as string], { env: { MAINPID: String(k.child.pid) } });
    expect(run.status).toBe(0);
    await until('the config reloaded', () => logsOf(k).some((l) => l.msg.startsWith('config reloaded')));

    expect(logsOf(k).find((l) => l.msg.startsWith('config reloaded'))).toMatchObject({
      trigger: 'SIGHUP',
      msg: 'config reloaded: nothing changed',
    });
    expect(k.child.exitCode).toBeNull();
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  }, 90_000);
});
