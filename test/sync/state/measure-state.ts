/**
 * Figures for the state database (not a test): bytes per tracked file, load time, the cost of
 * synchronous=FULL. Run: node --import ./test/sync/state/fixtures/register-ts.mjs test/sync/state/measure-state.ts [rows]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openState, type StateStore } from '../../../src/sync/state/index.js';
import { realisticTracked, seededRandom, shaOf } from './fixtures/realistic.js';

const rows = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'kbsync-measure-'));
const ms = (t0: bigint): string => (Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1);

function bytesPerRow(path: string, count: number): number {
  const db = new Database(path);
  db.exec('VACUUM');
  const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
  db.close();
  return Math.round(bytes / count);
}

function fill(path: string, sources: string[]): number {
  const s = openState(path);
  const rnd = seededRandom(42);
  let pathChars = 0;
  const files = Array.from({ length: rows }, (_, i) => {
    const source = sources[i % sources.length] as string;
    const f = realisticTracked(i, rnd, source);
    pathChars += f.path.length;
    return sources.length > 1 ? { ...f, remoteName: `${source}/${f.path}` } : f;
  });
  s.upsertTrackedMany(files);
  s.close();
  return pathChars / rows;
}

// 1. files only, one source
const one = join(dir, 'one', 'state.db');
const avgPath = fill(one, ['docs']);
console.log(`rows ${rows}, average path ${avgPath.toFixed(1)} chars`);
console.log(`bytes per tracked file (files only, one source): ${bytesPerRow(one, rows)}`);

// 2. load time in a fresh open: wall and CPU, first call and best of 3, against reading (path, size, mtime) alone
const timed = (fn: () => unknown): { wall: number; cpu: number } => {
  const c = process.cpuUsage();
  const w = process.hrtime.bigint();
  fn();
  const used = process.cpuUsage(c);
  return { wall: Number(process.hrtime.bigint() - w) / 1e6, cpu: (used.user + used.system) / 1000 };
};
const fmt = (x: { wall: number; cpu: number }): string => `${x.wall.toFixed(0)} ms wall / ${x.cpu.toFixed(0)} ms CPU`;
let t0 = process.hrtime.bigint();
const s1 = openState(one);
console.log(`open (existing, ${rows} rows) ${ms(t0)} ms`);
const first = timed(() => s1.loadTrackedFiles());
const raw0 = new Database(one, { readonly: true });
const refStmt = raw0.prepare('SELECT path, size, CAST(mtime_ns AS TEXT) FROM files').raw(true);
const reference = (): Map<string, unknown> => {
  const m = new Map<string, unknown>();
  for (const [path, size, mtimeNs] of refStmt.all() as [string, number, string][]) m.set(path, { size, mtimeNs });
  return m;
};
const best = (fn: () => unknown): { wall: number; cpu: number } => {
  const all = [timed(fn), timed(fn), timed(fn)];
  return { wall: Math.min(...all.map((a) => a.wall)), cpu: Math.min(...all.map((a) => a.cpu)) };
};
const ref = best(reference);
const load = best(() => s1.loadTrackedFiles());
raw0.close();
console.log(`loadTrackedFiles ${rows} rows: first call ${fmt(first)}; best of 3 ${fmt(load)}`);
console.log(`reference (path, size, mtime) into a Map: best of 3 ${fmt(ref)}; ratio ${(load.cpu / ref.cpu).toFixed(2)} (CPU)`);
t0 = process.hrtime.bigint();
s1.findBySha256(shaOf(rows - 1));
console.log(`findBySha256 (scan) ${ms(t0)} ms`);
t0 = process.hrtime.bigint();
s1.setRemoteStatus(String(100_000 + rows - 1), 'failed');
console.log(`setRemoteStatus by remote id (scan) ${ms(t0)} ms`);
t0 = process.hrtime.bigint();
s1.recordListing(Array.from({ length: 1000 }, (_, i) => ({ id: String(100_000 + i), status: 'queued', error: null, chunkCount: null })));
console.log(`recordListing 1000 ids ${ms(t0)} ms`);
s1.close();
const raw = new Database(one);
t0 = process.hrtime.bigint();
raw.pragma('quick_check');
console.log(`PRAGMA quick_check ${ms(t0)} ms`);
raw.exec('CREATE INDEX files_sha ON files(sha256)');
raw.close();
console.log(`bytes per tracked file with an index on sha256 (not kept): ${bytesPerRow(one, rows)}`);

// 3. several sources (remote names "source/path" stored as "/")
const many = join(dir, 'many', 'state.db');
fill(many, ['docs', 'wiki', 'specs']);
console.log(`bytes per tracked file (files only, three sources): ${bytesPerRow(many, rows)}`);

// 4. synchronous=FULL vs NORMAL: one paid op = enqueue + reserve + settle (3 commits)
function paidOps(s: StateStore, n: number, offset: number): number {
  const run = s.startRun('sync');
  const caps = { run: 1e12, day: 1e12, month: 1e12 };
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const id = s.enqueue({
      kind: 'upload',
      source: 'docs',
      path: `p/${offset + i}.md`,
      sha256: shaOf(`x${offset + i}`),
      size: 1000,
      mtimeNs: '1718000000000000000',
      inode: i,
      remoteName: `p/${offset + i}.md`,
      credits: 5,
      reason: 'new file',
    });
    s.reserve(id, caps, run);
    s.settle(id, { outcome: 'done', creditsCharged: 5, remoteId: String(offset + i), remoteStatus: 'queued' });
  }
  return Number(process.hrtime.bigint() - start) / 1e6 / n;
}
const full = openState(join(dir, 'sync', 'state.db'));
const fullMs = paidOps(full, 2000, 0);
full.close();
const rawDb = new Database(join(dir, 'raw.db'));
rawDb.pragma('journal_mode = WAL');
rawDb.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
const ins = rawDb.prepare('INSERT INTO t (v) VALUES (?)');
for (const mode of ['FULL', 'NORMAL']) {
  rawDb.pragma(`synchronous = ${mode}`);
  const start = process.hrtime.bigint();
  for (let i = 0; i < 3000; i++) ins.run('x'.repeat(100));
  console.log(`one small commit, WAL, synchronous=${mode}: ${(Number(process.hrtime.bigint() - start) / 1e6 / 3000).toFixed(3)} ms`);
}
rawDb.close();
console.log(`paid op bookkeeping (enqueue + reserve + settle = 3 commits), synchronous=FULL: ${fullMs.toFixed(3)} ms`);

// 5. bytes per tracked file after a first sync through the outbox (files + outbox + ledger)
const synced = join(dir, 'synced', 'state.db');
const s2 = openState(synced);
const rnd = seededRandom(7);
const run = s2.startRun('sync');
t0 = process.hrtime.bigint();
const syncedFiles = Array.from({ length: rows }, (_, i) => realisticTracked(i, rnd));
const opIds = s2.enqueueMany(syncedFiles.map((f) => ({ kind: 'upload' as const, ...f, credits: 5, reason: 'new file' })));
s2.transaction(() => {
  opIds.forEach((id, i) => {
    s2.reserve(id, { run: 1e12, day: 1e12, month: 1e12 }, run);
    s2.settle(id, { outcome: 'done', creditsCharged: 5, remoteId: String(100_000 + i), remoteStatus: 'processed' });
  });
});
console.log(`first sync bookkeeping for ${rows} uploads in one transaction: ${ms(t0)} ms`);
s2.finishRun(run, 'done', {});
s2.close();
const before = new Database(synced);
const pages = (before.pragma('page_count', { simple: true }) as number) * (before.pragma('page_size', { simple: true }) as number);
before.close();
console.log(`bytes per tracked file after a first sync and finishRun, file as left: ${Math.round(pages / rows)}`);
console.log(`bytes per tracked file after a first sync and finishRun, after VACUUM: ${bytesPerRow(synced, rows)}`);
const sd = new Database(synced, { readonly: true });
for (const t of ['files', 'outbox', 'ledger', 'budget_totals', 'sources']) {
  const r = sd.prepare('SELECT sum(pgsize) AS b FROM dbstat WHERE name = ?').get(t) as { b: number | null };
  console.log(`  ${t}: ${Math.round((r.b ?? 0) / rows)} B per tracked file`);
}
sd.close();
rmSync(dir, { recursive: true, force: true });
