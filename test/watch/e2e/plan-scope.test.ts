import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { logsOf, until, untilCopiesSettled, untilDaemonReady, useChildren } from '../../helpers/daemon-children.js';

/**
 * `kbsync plan` answered by a running `kbsync watch` after the changes a person makes: the daemon
 * walks only the folders changed since its last whole walk, takes the rest from that walk, and says
 * exactly what `kbsync plan --no-daemon` (a fresh walk of everything, the state read beside it) says.
 */
const suite = useE2eSuite({ before: ensureDist, timeoutMs: 240_000 });
const children = useChildren();

function kbsync(ws: Workspace, ...args: string[]): KbsyncChild {
  const k = spawnKbsync([...args, '-c', ws.configPath], ws.root);
  children.push(k);
  return k;
}

/** A tree with a bit of everything a plan reports: nested folders, ignored ones, skipped files, work deferred by the day's cap. */
function workspace(debounceMs: number, dayCap = 30): Workspace {
  const ds = suite.svc.dataset();
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: suite.svc.url,
    apiKey: ds.apiKey,
    // Eight files of 5 credits against 30 a day: six sent by the first cycle, two deferred ever after.
    config: {
      watch: { debounceMs, backend: 'events' },
      budget: { maxCreditsPerRun: 10_000, maxCreditsPerDay: dayCap, maxCreditsPerMonth: 10_000 },
      limits: { maxFileBytes: 2000 },
    },
  });
  ws.write('expenses.md', '# Expenses\n\nApproved by the finance controller.\n');
  ws.write('vpn.md', '# VPN\n\nThe gateway is vpn.example.net.\n');
  ws.write('guides/usage.md', '# Usage\n');
  ws.write('guides/setup/install.md', '# Install\n');
  ws.write('guides/setup/deep/more.md', '# More v1\n');
  ws.write('guides/drafts/wip.md', '# Work in progress\n');
  ws.write('guides/.kbsyncignore', 'drafts/\n');
  ws.write('archive/2019/old.md', '# Old\n');
  ws.write('archive/2019/older.md', '# Older\n');
  ws.write('archive/2020/last.md', '# Last\n');
  ws.write('data/table.xyz', 'not a supported type\n');
  ws.write('empty.md', '');
  ws.write('big.md', `# Big\n\n${'x'.repeat(3000)}\n`);
  ws.write('node_modules/pkg/readme.md', '# A dependency\n');
  return ws;
}

async function startWatch(ws: Workspace): Promise<KbsyncChild> {
  const k = kbsync(ws, 'watch');
  await untilDaemonReady(k, `${ws.statePath}.watch.json`);
  await untilCopiesSettled(ws.statePath);
  return k;
}

const answersOf = (k: KbsyncChild): unknown[] =>
  logsOf(k)
    .filter((l) => l.msg === 'plan answered')
    .map((l) => l.from);

/** The daemon's plan and a fresh one, compared: report and exit code. */
async function samePlan(ws: Workspace, step: string): Promise<string> {
  const fromDaemon = await kbsync(ws, 'plan').exited;
  const fresh = await kbsync(ws, 'plan', '--no-daemon').exited;
  expect(fromDaemon.stderr, step).toContain('answered by the running kbsync watch');
  expect(fromDaemon.stdout, step).toBe(fresh.stdout);
  expect(fromDaemon.code, step).toBe(fresh.code);
  return fresh.stdout;
}

describe('plan answered by kbsync watch: only the folders changed since its last walk are walked again', () => {
  it('after each change of an afternoon the answer is the fresh plan, byte for byte', async () => {
    const ws = workspace(60_000);
    const docs = (p: string): string => join(ws.docs, p);
    const daemon = await startWatch(ws);
    try {
      const first = await samePlan(ws, 'first');
      expect(first).toContain('2 deferred');
      expect(first).toMatch(/skip:too-large\s+0\s+big\.md/);

      ws.write('guides/setup/deep/more.md', '# More v2, a deep edit\n');
      // The day's cap is spent: the edit waits for the next day, as a fresh plan says too.
      expect(await samePlan(ws, 'a deep edit')).toMatch(/defer:over-budget\s+0\s+guides\/setup\/deep\/more\.md/);

      mkdirSync(docs('x/y/z'), { recursive: true });
      writeFileSync(docs('x/y/z/new.md'), '# Made in a folder just made\n');
      expect(await samePlan(ws, 'mkdir -p, then a file inside')).toContain('x/y/z/new.md');

      rmSync(docs('archive'), { recursive: true });
      expect(await samePlan(ws, 'a folder deleted')).toContain('archive/2020/last.md');

      renameSync(docs('guides/usage.md'), docs('x/usage.md'));
      expect(await samePlan(ws, 'a rename across folders')).toContain('x/usage.md');

      ws.write('data/more.xyz', 'another unsupported file\n');
      ws.write('guides/setup/empty-too.md', '');
      ws.write('node_modules/pkg/other.md', '# Another dependency page\n');
      await samePlan(ws, 'skipped files');

      ws.write('guides/.kbsyncignore', 'setup/\n');
      const reignored = await samePlan(ws, 'an ignore file edited');
      expect(reignored).toContain('guides/drafts/wip.md');

      // An editor's atomic save: a temp file written, then renamed over the page.
      writeFileSync(docs('.vpn.md.tmp'), '# VPN\n\nThe gateway moved to vpn2.example.net.\n');
      renameSync(docs('.vpn.md.tmp'), docs('vpn.md'));
      expect(await samePlan(ws, 'an atomic save')).toMatch(/vpn\.md/);

      await samePlan(ws, 'nothing changed');
      expect(answersOf(daemon)).toEqual(['walk', 'scope', 'scope', 'scope', 'scope', 'scope', 'scope', 'scope', 'memory']);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  });

  it('a cycle between two answers (its uploads, the deferred work it leaves, statuses it learns) is in the next', async () => {
    // Room for the eight files and one more: of the two changes below, one is sent and one deferred.
    const ws = workspace(200, 45);
    const daemon = await startWatch(ws);
    try {
      expect(await samePlan(ws, 'first')).toContain('0 deferred');
      const cycles = (): number => logsOf(daemon).filter((l) => l.msg === 'sync cycle done').length;
      const before = cycles();
      ws.write('guides/setup/install.md', '# Install v2\n');
      ws.write('new/page.md', '# A new page\n');
      await until('the cycle of the changes', () => cycles() > before);
      await untilCopiesSettled(ws.statePath);
      const after = await samePlan(ws, 'after the cycle');
      expect(after).toContain('1 deferred');
      expect(answersOf(daemon)).toEqual(['walk', 'scope']);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  });
});
