import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';
import { logsOf, until, useChildren } from '../../helpers/daemon-children.js';

/*
 * A daemon whose day cap holds files back plans them again at every full cycle until the day opens:
 * its log names each such file once, not at every cycle, and `/metrics` counts what `kbsync status` says
 * is deferred, also after a cycle that looked at one folder only.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());
beforeAll(() => ensureDist(), 300_000);
const children = useChildren();

/** Each small Markdown file costs 5 credits on the embedded service: the cap admits two of three. */
const config = (exclude: string): string => `target: { kind: embedded, dataDir: .kbsync/service }
state: .kbsync/state.db
sources:
  - name: docs
    path: ./docs
    exclude: [${JSON.stringify(exclude)}]
budget: { maxCreditsPerDay: 10 }
watch: { debounceMs: 200 }
upload: { requestsPerSecond: 100 }
`;

describe('kbsync watch with files the day cap holds back', () => {
  it('logs each deferred file once across cycles, and /metrics counts what kbsync status says is deferred', async () => {
    const root = temp.make();
    writeFileSync(join(root, 'kbsync.yaml'), config('none-1-*'));
    mkdirSync(join(root, 'docs', 'new'), { recursive: true });
    for (const name of ['a', 'b', 'c']) writeFileSync(join(root, 'docs', `${name}.md`), `# ${name}\n\nText of ${name}.\n`);
    const k = spawnKbsync(['watch', '--http', '127.0.0.1:0'], root);
    children.push(k);
    const cycles = (): number => logsOf(k).filter((l) => l.msg === 'sync cycle done').length;
    await until('the first cycle', () => cycles() === 1, 60_000);

    // Two full cycles (a config change re-plans every source), then one of the changed folder only,
    // which sees the file it defers and not the one deferred before.
    writeFileSync(join(root, 'kbsync.yaml'), config('none-2-*'));
    await until('a cycle after the first reload', () => cycles() === 2);
    writeFileSync(join(root, 'kbsync.yaml'), config('none-3-*'));
    await until('a cycle after the second reload', () => cycles() === 3);
    writeFileSync(join(root, 'docs', 'new', 'd.md'), '# d\n\nText of d.\n');
    await until('a cycle of the new file', () => cycles() === 4);

    const status = JSON.parse((await spawnKbsync(['status', '--json'], root).exited).stdout) as {
      daemon: { http: string; deferred: { files: number } | null };
    };
    const daemon = status.daemon;
    const metrics = await (await request(`http://${daemon.http}/metrics`)).body.text();

    const deferredLines = logsOf(k).filter((l) => l.msg === 'file' && l.action === 'defer:over-budget');
    expect(deferredLines.map((l) => l.path).sort()).toEqual(['c.md', 'new/d.md']);
    expect(
      logsOf(k)
        .filter((l) => l.msg === 'sync cycle done')
        .map((l) => l.deferred),
    ).toEqual([1, 1, 1, 1]);
    expect(daemon.deferred?.files).toBe(2);
    expect(metrics).toMatch(/^kbsync_files_deferred 2$/m);
  }, 120_000);
});
