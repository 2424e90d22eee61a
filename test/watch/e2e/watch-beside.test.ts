import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { ensureDist } from '../../helpers/build-dist.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { logsOf, until, useChildren } from '../../helpers/daemon-children.js';
import { freshDatabase } from '../../helpers/postgres.js';

/**
 * Every other command beside a running `kbsync watch` (a real child process holding the state's lock):
 * those that read, read beside it; `plan` is answered by the daemon itself; those that pay record
 * their calls as guests of the state, each charged once.
 */
const suite = useE2eSuite({ before: ensureDist, timeoutMs: 240_000 });
const children = useChildren();

const DOCS: Record<string, string> = {
  'expenses.md': '# Expense approval\n\nExpense reports are approved by the finance controller within five working days.\n',
  'vpn.md': '# VPN access\n\nThe WireGuard VPN gateway is vpn.example.net. Import the tunnel profile from the IT portal.\n',
};

function workspace(ds: E2eDataset, debounceMs = 300, watch: Record<string, unknown> = {}): Workspace {
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: suite.svc.url,
    apiKey: ds.apiKey,
    config: { watch: { debounceMs, ...watch } },
  });
  for (const [path, text] of Object.entries(DOCS)) ws.write(path, text);
  return ws;
}

function kbsync(ws: Workspace, ...args: string[]): KbsyncChild {
  const k = spawnKbsync([...args, '-c', ws.configPath], ws.root);
  children.push(k);
  return k;
}

async function startWatch(ws: Workspace, pg?: { url: string; statusPath: string }): Promise<KbsyncChild> {
  const statusPath = pg?.statusPath ?? `${ws.statePath}.watch.json`;
  const k = kbsync(ws, 'watch');
  const ready = (): boolean => {
    if (!existsSync(statusPath)) return false;
    const s = JSON.parse(readFileSync(statusPath, 'utf8')) as { ready: boolean; pid: number };
    return s.ready && s.pid === k.child.pid;
  };
  await until('the daemon ready after its first sync', ready);
  // And the copies it sent seen processed (its remote poll): their statuses change no more under the plans compared.
  await until('the copies of the first sync processed', () => {
    const state = pg === undefined ? openState(ws.statePath, { access: 'reader' }) : openState(pg.url, { lock: false });
    try {
      return !state.hasUnsettledRemote();
    } finally {
      state.close();
    }
  });
  return k;
}

async function stop(k: KbsyncChild): Promise<void> {
  k.child.kill('SIGTERM');
  expect((await k.exited).code).toBe(0);
}

/** The credits the state records as spent today, read beside the daemon (read-only). */
function spentOf(ws: Workspace): number {
  const state = openState(ws.statePath, { access: 'reader' });
  try {
    return state.creditsUsed(null).spent.day;
  } finally {
    state.close();
  }
}

const planAnswers = (k: KbsyncChild): number => logsOf(k).filter((l) => l.msg === 'plan answered').length;

describe('commands beside a running kbsync watch', () => {
  it('plan is answered by the daemon (the same report, --json and exit code as a plan that reads the state), a change of a moment ago included', async () => {
    const ds = suite.svc.dataset();
    // A long debounce: the change below is still waiting for its cycle when plan is asked.
    const ws = workspace(ds, 60_000);
    const daemon = await startWatch(ws);
    const socket = `${ws.statePath}.watch.sock`;
    expect(statSync(socket).mode & 0o777).toBe(0o600);

    const fromDaemon = await kbsync(ws, 'plan').exited;
    const fresh = await kbsync(ws, 'plan', '--no-daemon').exited;
    expect(fromDaemon.code, fromDaemon.stderr).toBe(0);
    expect(fromDaemon.stderr).toContain(`answered by the running kbsync watch (pid ${daemon.child.pid})`);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stderr).not.toContain('answered by');
    expect(fromDaemon.stdout).toBe(fresh.stdout);
    expect(fromDaemon.stdout).toContain('2 unchanged');
    expect(planAnswers(daemon)).toBe(1);
    // Asked again with nothing changed in between: answered from memory, not by another walk.
    const again = await kbsync(ws, 'plan').exited;
    expect(again.stdout).toBe(fresh.stdout);

    ws.write('new.md', '# New\n\nA page written a moment ago.\n');
    ws.write('vpn.md', '# VPN access\n\nThe gateway moved to vpn2.example.net.\n');
    const changed = await kbsync(ws, 'plan').exited;
    const changedJson = await kbsync(ws, 'plan', '--json').exited;
    const freshJson = await kbsync(ws, 'plan', '--json', '--no-daemon').exited;
    const freshChanged = await kbsync(ws, 'plan', '--no-daemon').exited;
    await stop(daemon);

    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toMatch(/upload\s+5\s+new\.md/);
    expect(changed.stdout).toMatch(/upload\s+5\s+vpn\.md/);
    expect(changed.stdout).toBe(freshChanged.stdout);
    expect(changedJson.stderr).toContain('answered by the running kbsync watch');
    expect(changedJson.stdout).toBe(freshJson.stdout);
    expect(JSON.parse(changedJson.stdout).summary).toMatchObject({ uploaded: 2, unchanged: 1 });
    expect(changed.code).toBe(freshChanged.code);
    expect(changedJson.code).toBe(freshJson.code);
    // The change made the answer in memory stale: its folder walked again (--json lists every file: a whole walk).
    expect(
      logsOf(daemon)
        .filter((l) => l.msg === 'plan answered')
        .map((l) => l.from),
    ).toEqual(['walk', 'memory', 'scope', 'walk']);
    expect(await ds.files()).toHaveLength(2);
  });

  it('a polled folder (its changes come late): no answer is kept, each plan walks again', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, 60_000, { backend: 'polling', pollIntervalMs: 5000 });
    const daemon = await startWatch(ws);
    const first = await kbsync(ws, 'plan').exited;
    ws.write('new.md', '# New\n');
    const second = await kbsync(ws, 'plan').exited;
    await stop(daemon);

    expect(first.stderr).toContain('answered by the running kbsync watch');
    expect(second.stdout).toMatch(/upload\s+5\s+new\.md/);
    expect(
      logsOf(daemon)
        .filter((l) => l.msg === 'plan answered')
        .map((l) => l.from),
    ).toEqual(['walk', 'walk']);
  });

  it('status, explain, audit, agents list, query, check, agents create and chat all work beside it; the paid ones are recorded and charged once', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = workspace(ds);
    writeFileSync(join(ws.root, 'checks.yaml'), '- question: how do I reach the WireGuard VPN gateway\n  expect: [vpn.md]\n');
    const daemon = await startWatch(ws);
    const balance = await ds.balance();
    const ledgerBefore = spentOf(ws);

    const status = await kbsync(ws, 'status').exited;
    const explain = await kbsync(ws, 'explain', 'vpn.md').exited;
    const audit = await kbsync(ws, 'audit').exited;
    const list = await kbsync(ws, 'agents', 'list').exited;
    const query = await kbsync(ws, 'query', 'WireGuard', '--json').exited;
    const check = await kbsync(ws, 'check', '--questions', 'checks.yaml').exited;
    const created = await kbsync(ws, 'agents', 'create', 'handbook', '--json').exited;
    const agentId = String((JSON.parse(created.stdout) as { agent: { id: string | number } }).agent.id);
    const chat = await kbsync(ws, 'chat', agentId, 'where is the VPN gateway?').exited;
    const charged = balance - (await ds.balance());
    const recorded = spentOf(ws) - ledgerBefore;
    ws.write('after.md', '# After\n');
    await until('after.md uploaded by the daemon', () =>
      logsOf(daemon).some((l) => l.msg === 'file' && l.path === 'after.md' && l.outcome === 'done'),
    );
    await stop(daemon);

    for (const run of [status, explain, audit, list, query, check, created, chat]) expect(run.code, run.stderr).toBe(0);
    expect(status.stdout).toMatch(/tracked:\s+2 files/);
    expect(status.stdout).toContain(`daemon:              running (pid ${daemon.child.pid}`);
    expect(explain.stdout).toContain('vpn.md');
    expect(explain.stdout).toContain('unchanged');
    expect(audit.stdout).toMatch(/in sync|0 drift|no drift/i);
    expect((JSON.parse(query.stdout) as { results: { path: string }[] }).results[0]?.path).toBe('vpn.md');
    expect(check.stdout).toContain('1 passed');
    // Every credit the service took is in the ledger, once; nothing is left reserved, in flight or unknown.
    expect(charged).toBeGreaterThanOrEqual(3);
    expect(recorded).toBe(charged);
    const state = openState(ws.statePath);
    try {
      expect(state.creditsUsed(null).reserved.day).toBe(0);
      expect([...state.inFlightOps(), ...state.unknownOps(), ...state.pendingOps()]).toEqual([]);
      expect(state.verifyTotals()).toEqual([]);
    } finally {
      state.close();
    }
  });

  it('a second watch or a sync on the same state is refused naming the holder and the two safe choices, never another state', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    const daemon = await startWatch(ws);
    const second = await kbsync(ws, 'watch').exited;
    const sync = await kbsync(ws, 'sync').exited;
    await stop(daemon);

    for (const run of [second, sync]) {
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`\`kbsync watch\` (pid ${daemon.child.pid} on ${hostname()}, since `);
      expect(run.stderr).toContain('stop that one');
      expect(run.stderr).toContain('PostgreSQL');
      expect(run.stderr).not.toMatch(/another `?state`? path|another state/i);
    }
  });

  it('on a PostgreSQL state too: plan is answered by the daemon, and a query is a runner of no source (no wait for the source lock), charged once', async () => {
    const url = await freshDatabase('watch_beside');
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { state: url, watch: { debounceMs: 300 } },
    });
    for (const [path, text] of Object.entries(DOCS)) ws.write(path, text);
    const daemon = await startWatch(ws, { url, statusPath: join(ws.root, '.kbsync', 'postgres.state.watch.json') });
    const balance = await ds.balance();

    const plan = await kbsync(ws, 'plan').exited;
    const fresh = await kbsync(ws, 'plan', '--no-daemon').exited;
    const started = Date.now();
    const query = await kbsync(ws, 'query', 'WireGuard', '--json').exited;
    const queryMs = Date.now() - started;
    const charged = balance - (await ds.balance());
    await stop(daemon);

    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain(`answered by the running kbsync watch (pid ${daemon.child.pid})`);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(plan.stdout).toBe(fresh.stdout);
    expect(query.code, query.stderr).toBe(0);
    // A runner of the daemon's sources would have waited 3 s for their lock, then been refused.
    expect(queryMs).toBeLessThan(3000);
    expect(charged).toBe(1);
    const state = openState(url, { lock: false });
    try {
      // The two uploads (5 credits each) and the query, each once.
      expect(state.creditsUsed(null).spent.day).toBe(10 + 1);
    } finally {
      state.close();
    }
  });
});
