import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedService } from '../../../src/service/embedded.js';
import { openState } from '../../../src/sync/state/index.js';
import { sha256Hex } from '../../../src/shared/sha256.js';
import { multipartBody, send } from '../../service/helpers.js';
import { ensureDist } from '../../helpers/build-dist.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type ChildExit, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { logsOf, until, untilDaemonReady, useChildren } from '../../helpers/daemon-children.js';

/*
 * Commands beside a real `kbsync watch` on the embedded target: each starts the local service in its
 * own process on the same data folder (service.db and files/), while the daemon's service uploads.
 * Neither side may see a lock error, a temp file of the other's taken away, or the daemon stopped.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());
beforeAll(() => ensureDist(), 300_000);
const children = useChildren();

const DEBOUNCE_MS = 300;
const CONFIG = `target: { kind: embedded, plan: basic, dataDir: .kbsync/service, startCredits: 100000 }
state: .kbsync/state.db
sources:
  - name: docs
    path: ./docs
budget: { maxCreditsPerRun: 100000, maxCreditsPerDay: 100000, maxCreditsPerMonth: 100000 }
upload: { requestsPerSecond: 1000 }
watch: { debounceMs: ${DEBOUNCE_MS} }
`;

/** A workspace with two documents and the embedded target. */
function workspace(): string {
  const root = temp.make();
  writeFileSync(join(root, 'kbsync.yaml'), CONFIG);
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'docs', 'vpn.md'), '# VPN access\n\nThe WireGuard VPN gateway is vpn.example.net.\n');
  writeFileSync(join(root, 'docs', 'expenses.md'), '# Expenses\n\nExpense reports are approved within five working days.\n');
  return root;
}

function kbsync(root: string, ...args: string[]): KbsyncChild {
  const k = spawnKbsync(args, root);
  children.push(k);
  return k;
}

/** True when the embedded dataset holds a copy of `name` with this content (read from its database, read-only). */
function inDataset(root: string, name: string, content: string): boolean {
  const path = join(root, '.kbsync', 'service', 'service.db');
  if (!existsSync(path)) return false;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT 1 FROM files WHERE name = ? AND sha256 = ?').get(name, sha256Hex(content)) !== undefined;
  } finally {
    db.close();
  }
}

/** How many files the state tracks now (read beside the daemon). */
function trackedCount(root: string): number {
  const state = openState(join(root, '.kbsync', 'state.db'), { access: 'reader' });
  try {
    return state.trackedCount();
  } finally {
    state.close();
  }
}

/** The pids of the services that processed the dataset's files. */
function claimers(root: string): string[] {
  const db = new Database(join(root, '.kbsync', 'service', 'service.db'), { readonly: true, fileMustExist: true });
  try {
    const owners = db.prepare('SELECT DISTINCT claimed_by FROM files').pluck().all() as string[];
    return [...new Set(owners.map((o) => o.split('-')[0] ?? ''))];
  } finally {
    db.close();
  }
}

/** The lines of a log or output that tell of a lock, a busy database or a vanished temp file. */
const lockTrouble = (text: string): string[] =>
  text.split('\n').filter((l) => /database is locked|SQLITE_BUSY|ENOENT|state_locked|holds the writer lock/i.test(l));

describe('commands beside a kbsync watch on the embedded target', () => {
  it('60 queries beside 15 edits: every query answers, the daemon meets no lock error, every edit lands in its first cycle', async () => {
    const root = workspace();
    const daemon = kbsync(root, 'watch');
    await untilDaemonReady(daemon, join(root, '.kbsync', 'state.db.watch.json'), 60_000);

    const queries: ChildExit[] = [];
    const landed = new Map<string, number>();
    const written = new Map<string, { at: number; content: string }>();
    // Each edit is looked for in the dataset while the queries go on.
    let looking = true;
    const looker = (async () => {
      while (looking || landed.size < written.size) {
        for (const [name, w] of written) if (!landed.has(name) && inDataset(root, name, w.content)) landed.set(name, Date.now() - w.at);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    for (let i = 0; i < 60; i++) {
      if (i % 4 === 0) {
        const name = `edit-${i / 4}.md`;
        const content = `# Edit ${i / 4}\n\nThe note written before query ${i}: ${'text '.repeat(40)}\n`;
        writeFileSync(join(root, 'docs', name), content);
        written.set(name, { at: Date.now(), content });
      }
      queries.push(await kbsync(root, 'query', 'WireGuard gateway', '--json').exited);
    }
    looking = false;
    await Promise.race([looker, until('every edit in the dataset', () => landed.size === written.size, 60_000).then(() => looker)]);
    const log = daemon.stderrSoFar();
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);

    for (const q of queries) {
      expect(q.code, q.stderr).toBe(0);
      expect(lockTrouble(q.stderr)).toEqual([]);
    }
    expect(lockTrouble(log)).toEqual([]);
    // Every edit was sent once, by the cycle that followed it: no failed or unknown upload left for a retry.
    const fileLines = logsOf(daemon).filter((l) => l.msg === 'file' && String(l.path).startsWith('edit-'));
    expect(fileLines.filter((l) => l.outcome !== 'done')).toEqual([]);
    expect(fileLines.map((l) => l.path).sort()).toEqual([...written.keys()].sort());
    // Processed by the daemon's service: a query's, which ends soon, takes none of its files.
    expect(claimers(root)).toEqual([String(daemon.child.pid)]);
    // In the dataset within the debounce and 3 s of its write.
    for (const [name, ms] of landed) expect(ms, name).toBeLessThanOrEqual(DEBOUNCE_MS + 3000);
  }, 400_000);

  it('a query takes up no queued file: what it would leave half done at its exit is the daemon’s to process', async () => {
    const root = workspace();
    // A file queued on the embedded dataset, by a service that processes nothing.
    const service = await startEmbeddedService({ dataDir: join(root, '.kbsync', 'service'), plan: 'basic', background: false });
    const { body, contentType } = multipartBody({ name: 'queued.md', content: '# Queued\n\nWaiting for a worker.\n' });
    const up = await send(
      `${service.baseUrl}/api/v1/ext/files/upload`,
      'POST',
      { 'x-api-key': service.apiKey, 'content-type': contentType },
      body,
    );
    await service.close();
    expect(up.status, up.text).toBe(201);

    const query = await kbsync(root, 'query', 'WireGuard').exited;

    expect(query.code, query.stderr).toBe(0);
    const db = new Database(join(root, '.kbsync', 'service', 'service.db'), { readonly: true, fileMustExist: true });
    try {
      expect(db.prepare('SELECT status, attempts FROM files').all()).toEqual([{ status: 'queued', attempts: 0 }]);
    } finally {
      db.close();
    }
  }, 120_000);

  it('status, explain and query started again and again while a daemon starts never make it exit', async () => {
    const root = workspace();
    const statusPath = join(root, '.kbsync', 'state.db.watch.json');
    const runs: { args: string[]; exit: ChildExit }[] = [];
    // The first round on a folder with no state yet, the others on the state the daemon before left.
    for (let round = 0; round < 4; round++) {
      const daemon = kbsync(root, 'watch');
      const outcome = Promise.race([
        untilDaemonReady(daemon, statusPath, 120_000).then(() => 'ready'),
        daemon.exited.then((e) => `exited ${e.code}: ${e.stderr}`),
      ]);
      let ended = false;
      void outcome.finally(() => (ended = true));
      // Two commands at a time, back to back, until the daemon is ready (or has exited).
      const beside = async (lane: number): Promise<void> => {
        for (let i = 0; !ended; i++) {
          const args = [['status'], ['status', '--json'], ['explain', 'vpn.md'], ['query', 'WireGuard']][(i + lane) % 4] as string[];
          runs.push({ args, exit: await kbsync(root, ...args).exited });
        }
      };
      await Promise.all([beside(0), beside(1)]);
      expect(await outcome).toBe('ready');
      daemon.child.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
    }

    for (const r of runs) expect(r.exit.code, `${r.args.join(' ')}: ${r.exit.stderr}`).toBe(0);
    expect(runs.length).toBeGreaterThan(8);
  }, 400_000);

  it('a daemon started while a command holds the lock to repair before it reads waits for it, then starts', async () => {
    const root = workspace();
    // The lock as `kbsync plan` takes it on a state still to check against the dataset (here held by this process).
    const held = openState(join(root, '.kbsync', 'state.db'), { command: 'plan', yields: true });
    const daemon = kbsync(root, 'watch');
    await until('the daemon waiting', () => logsOf(daemon).some((l) => l.msg === 'waiting for the state lock of a command that reads'));
    held.close();
    await untilDaemonReady(daemon, join(root, '.kbsync', 'state.db.watch.json'), 60_000);
    daemon.child.kill('SIGTERM');

    expect((await daemon.exited).code).toBe(0);
    expect(logsOf(daemon).find((l) => l.msg === 'waiting for the state lock of a command that reads')).toMatchObject({
      pid: process.pid,
      command: 'plan',
    });
  }, 120_000);

  it('status (text and --json) during a long cycle of thousands of new files never exits 5: it reads one snapshot', async () => {
    const root = workspace();
    const daemon = kbsync(root, 'watch');
    await untilDaemonReady(daemon, join(root, '.kbsync', 'state.db.watch.json'), 60_000);
    const cycles = (): number => logsOf(daemon).filter((l) => l.msg === 'sync cycle done').length;
    // Thousands of files at once: one long cycle that writes their rows as its uploads settle.
    mkdirSync(join(root, 'docs', 'bulk'));
    for (let i = 0; i < 3000; i++) writeFileSync(join(root, 'docs', 'bulk', `n${i}.md`), `# Note ${i}\n\nThe body of note ${i}.\n`);
    // Past some thousands of rows a read of them is long enough for the cycle to write more in between.
    await until('2,000 of them tracked', () => trackedCount(root) >= 2000, 300_000);

    const runs: ChildExit[] = [];
    for (let i = 0; i < 20 && cycles() < 2; i++) runs.push(await kbsync(root, 'status', ...(i % 2 === 0 ? [] : ['--json'])).exited);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);

    expect(runs.filter((r) => r.code !== 0).map((r) => `${r.code}: ${r.stderr}`)).toEqual([]);
    // Made during the cycle: they saw it under way.
    expect(runs.length).toBeGreaterThanOrEqual(4);
    const seen = runs.map((r, i) =>
      i % 2 === 0
        ? Number(/tracked:\s+([\d,]+) files/.exec(r.stdout)?.[1]?.replaceAll(',', ''))
        : (JSON.parse(r.stdout) as { tracked: { files: number } }).tracked.files,
    );
    expect(seen.filter((n) => !(n >= 2000 && n < 3002))).toEqual([]);
  }, 600_000);
});
