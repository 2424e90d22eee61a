import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';
import { logsOf, until, useChildren } from '../../helpers/daemon-children.js';

/*
 * A daemon whose sync the service stopped (402: out of credits) says so in `kbsync status`, not only in
 * its log: the files left are not deferred by a cap of the config, and no change will send them.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());
beforeAll(() => ensureDist(), 300_000);
const children = useChildren();

const CONFIG = `target: { kind: embedded, plan: basic, dataDir: .kbsync/service, startCredits: 7 }
state: .kbsync/state.db
sources:
  - name: docs
    path: ./docs
upload: { requestsPerSecond: 100 }
`;

describe('kbsync status beside a daemon whose sync the service stopped', () => {
  it('names why the last sync stopped spending: the service refused, with its message', async () => {
    const root = temp.make();
    writeFileSync(join(root, 'kbsync.yaml'), CONFIG);
    mkdirSync(join(root, 'docs'));
    for (const name of ['a', 'b', 'c']) writeFileSync(join(root, 'docs', `${name}.md`), `# ${name}\n\nText of ${name}.\n`);
    const k = spawnKbsync(['watch'], root);
    children.push(k);
    await until('the sync stopped spending', () => logsOf(k).some((l) => l.msg === 'the sync stopped spending'), 60_000);
    await until('the cycle done', () => logsOf(k).some((l) => l.msg === 'sync cycle done'));

    const status = await spawnKbsync(['status'], root).exited;
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^last sync: +#\d+ stopped,/m);
    expect(status.stdout).toMatch(/^stopped spending: +the service refused \(insufficient_credits\): .*402 insufficient_credits/m);
    const json = await spawnKbsync(['status', '--json'], root).exited;
    const lastRun = (JSON.parse(json.stdout) as { lastRun: { stop: { by: string; code: string } | null } }).lastRun;
    expect(lastRun.stop).toMatchObject({ by: 'service', code: 'insufficient_credits' });
  }, 120_000);
});
