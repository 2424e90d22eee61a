/**
 * Figures for TrackedIndex's bulk load (not a test): the core columns (what a plan of unchanged files
 * reads), then the details, then every TrackedFile made (what `kbsync status` does). SQLite by default
 * (CPU ms), `pg` for a PostgreSQL state on a server of its own (wall ms: the server is another process).
 * Run: npx node --import ./test/sync/state/fixtures/register-ts.mjs test/sync/state/measure-tracked-load.ts [rows] [pg]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openState } from '../../../src/sync/state/index.js';
import { startPostgres } from '../../helpers/postgres-server.js';
import { realisticTracked, seededRandom } from './fixtures/realistic.js';

const rows = Number(process.argv[2] ?? 100_000);
const onPg = process.argv[3] === 'pg';
const dir = mkdtempSync(join(tmpdir(), 'kbsync-measure-load-'));
const server = onPg ? await startPostgres() : null;
let where = join(dir, 'state.db');
if (server !== null) {
  const admin = new pg.Client({ connectionString: `${server.url}/postgres` });
  await admin.connect();
  await admin.query('CREATE DATABASE measure');
  await admin.end();
  where = `${server.url}/measure`;
}
const seed = openState(where);
const rnd = seededRandom(42);
seed.upsertTrackedMany(Array.from({ length: rows }, (_, i) => realisticTracked(i, rnd, 'docs')));
seed.close();

const state = openState(where);
const cost = (fn: () => unknown): number => {
  const [t0, c0] = [performance.now(), process.cpuUsage()];
  fn();
  const c = process.cpuUsage(c0);
  return onPg ? performance.now() - t0 : (c.user + c.system) / 1000;
};
const figure = (name: string, fn: () => unknown): void => {
  const all = Array.from({ length: 7 }, () => cost(fn)).sort((a, b) => a - b);
  console.log(`${name}: best ${all[0]?.toFixed(1)} ms, median ${all[3]?.toFixed(1)} ms (${onPg ? 'wall' : 'CPU'})`);
};
console.log(`${rows} tracked files, ${onPg ? 'PostgreSQL' : 'SQLite'} state`);
figure('load (core columns)', () => state.loadTrackedFiles());
figure('load, then the details', () => state.loadTrackedFiles().loadDetails());
figure('load, then every TrackedFile made', () => [...state.loadTrackedFiles().values()]);
state.close();
await server?.stop();
rmSync(dir, { recursive: true, force: true });
