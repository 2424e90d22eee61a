import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createGitOrigin, GIT_ENV } from '../../helpers/e2e-git.js';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { startDaemon, useChildren, until, logsOf } from '../../helpers/daemon-children.js';

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();

describe('kbsync watch: git sources', () => {
  it('a poll that finds no moved ref runs no cycle; a moved ref is synced; the clone is logged', async () => {
    const ds = suite.svc.dataset();
    const root = suite.temp.make();
    const origin = createGitOrigin(root, { 'guide.md': '# Guide\n' });
    const ws = createWorkspace(root, {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main', pollSeconds: 1 } }], watch: { rescanMinutes: 60 } },
    });
    const k = startDaemon(children, ws, [], GIT_ENV);
    const status = (): { ready: boolean; counters: { cycles: number } } | null => {
      const path = `${ws.statePath}.watch.json`;
      return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { ready: boolean; counters: { cycles: number } }) : null;
    };
    const cycles = (): number => logsOf(k).filter((l) => l.msg === 'sync cycle done').length;
    await until('the daemon ready', () => status()?.ready === true);
    // The status file can say ready before the cycle's log line has crossed the pipe.
    await until('the first cycle logged', () => cycles() === 1);
    const clone = logsOf(k).find((l) => l.msg.startsWith('cloning the git source'));
    expect(clone).toMatchObject({ source: 'repo', ref: 'main' });
    const at = (msg: string): number => logsOf(k).findIndex((l) => l.msg.startsWith(msg));
    expect(at('cloning the git source')).toBeLessThan(at('sync cycle done'));

    // Four polls with the ref where it was: no cycle, no line.
    await new Promise((r) => setTimeout(r, 4500));
    expect(cycles()).toBe(1);
    expect(status()?.counters.cycles).toBe(1);

    origin.commit({ 'news.md': '# News\n' }, 'add news');
    await until('news.md uploaded after a poll', () =>
      logsOf(k).some((l) => l.msg === 'file' && l.path === 'news.md' && l.action === 'upload' && l.outcome === 'done'),
    );
    // A file's line is written as its call settles, before its cycle's end.
    await until('the poll cycle logged', () => cycles() === 2);
    expect(logsOf(k).filter((l) => l.msg === 'sync cycle done')[1]).toMatchObject({ reasons: ['git-poll'], uploaded: 1 });
    await new Promise((r) => setTimeout(r, 3000));
    expect(cycles()).toBe(2);
    expect(logsOf(k).filter((l) => l.msg.startsWith('cloning the git source'))).toHaveLength(1);
  }, 60_000);

  it('a cycle longer than pollSeconds (paced uploads) is not followed by a poll cycle that finds nothing', async () => {
    const ds = suite.svc.dataset();
    const root = suite.temp.make();
    const four = Object.fromEntries(['a', 'b', 'c', 'd'].map((n) => [`${n}.md`, `# ${n}\n\nPage ${n}.\n`]));
    const origin = createGitOrigin(root, four);
    const ws = createWorkspace(root, {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: {
        sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main', pollSeconds: 1 } }],
        // Four uploads at 1 a second: each cycle that sends them outlasts several polls.
        upload: { concurrency: 1, requestsPerSecond: 1 },
        watch: { rescanMinutes: 60 },
      },
    });
    const k = startDaemon(children, ws, [], GIT_ENV);
    const cycles = (): Record<string, unknown>[] => logsOf(k).filter((l) => l.msg === 'sync cycle done');
    await until('the first cycle logged', () => cycles().length === 1, 60_000);
    expect(cycles()[0]).toMatchObject({ reasons: ['start'], uploaded: 4 });
    // Several polls after it, the ref where the first cycle synced it: no cycle.
    await new Promise((r) => setTimeout(r, 4000));
    expect(cycles()).toHaveLength(1);

    origin.commit(Object.fromEntries(['e', 'f', 'g', 'h'].map((n) => [`${n}.md`, `# ${n}\n\nPage ${n}.\n`])), 'four more');
    await until('the poll cycle logged', () => cycles().length === 2, 60_000);
    expect(cycles()[1]).toMatchObject({ reasons: ['git-poll'], uploaded: 4 });
    await new Promise((r) => setTimeout(r, 4000));
    expect(cycles().map((c) => c.reasons)).toEqual([['start'], ['git-poll']]);
  }, 120_000);
});
