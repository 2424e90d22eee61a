import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Sqlite from 'better-sqlite3';
import { startEmbeddedService } from '../src/service/embedded.js';
import { openServiceDb } from '../src/service/store/db.js';
import { SERVICE_DB_FILE } from '../src/shared/service-db.js';
import type { Figure } from './figure.js';
import { round1 } from './measure.js';
import { fresh, kbsync, label, limit, measure, scaleConfig, shell } from './scale-figures.js';
import { scaleTree, seededState, TREES } from './scale-tree.js';

type Opts = { log?: (line: string) => void };

/** Fills the embedded service's dataset with the seeded state's files as processed copies: ids, names and hashes as tracked. */
function seedDataset(serviceDb: string, datasetId: number, statePath: string): number {
  const state = new Sqlite(statePath, { readonly: true });
  const db = openServiceDb(serviceDb);
  try {
    const rows = state
      .prepare(
        `SELECT CAST(f.remote_id AS INTEGER) AS id, CASE WHEN f.remote_name IS NULL THEN f.path WHEN f.remote_name = '/' THEN s.name || '/' || f.path
           ELSE f.remote_name END AS name, f.size AS size, lower(hex(f.sha256)) AS sha256
         FROM files f JOIN sources s ON s.id = f.source_id WHERE f.remote_id IS NOT NULL ORDER BY id`,
      )
      .raw(true)
      .iterate() as IterableIterator<[number, string, number, string]>;
    const source = db.prepare(`INSERT INTO knowledge_sources (id, dataset_id, kind) VALUES (?, ?, 'file')`);
    const file = db.prepare(
      `INSERT INTO files (id, dataset_id, name, size, sha256, status, chunk_count, stored_path, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'processed', 1, '/nowhere', ?, ?)`,
    );
    const now = new Date().toISOString();
    let n = 0;
    db.transaction(() => {
      for (const [id, name, size, sha256] of rows) {
        source.run(id, datasetId);
        file.run(id, datasetId, name, size, sha256, now, now);
        n++;
      }
    })();
    return n;
  } finally {
    db.close();
    state.close();
  }
}

/**
 * Node's fetch loads and sets up its HTTP client at its first call (some 100 ms): made once against a
 * throwaway server, so that the first page times the service, not this process's client.
 */
async function warmFetch(): Promise<void> {
  const server = createServer((_req, res) => res.end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)).json();
  } finally {
    server.close();
  }
}

/** Every page of `GET /files/` (1,000 a page) timed over HTTP, first to last; the total the service answered. */
async function pageTimes(baseUrl: string, apiKey: string): Promise<{ ms: number[]; seen: number; total: number }> {
  await warmFetch();
  const ms: number[] = [];
  let seen = 0;
  let total = 0;
  for (let offset = 0; ; offset += 1000) {
    const t0 = performance.now();
    const res = await fetch(`${baseUrl}/api/v1/ext/files/?limit=1000&offset=${offset}`, { headers: { 'X-API-Key': apiKey } });
    const body = (await res.json()) as { files: unknown[]; total: number };
    ms.push(performance.now() - t0);
    if (!res.ok) throw new Error(`GET /files/ offset ${offset}: HTTP ${res.status}`);
    total = body.total;
    if (body.files.length === 0) return { ms, seen, total };
    seen += body.files.length;
  }
}

/** 7. The local service at 1M: each `GET /files/` page of 1,000 (deepest included) and the peak RSS of `kbsync audit` against it. */
export async function localService(o: Opts): Promise<Figure[]> {
  const log = o.log ?? (() => {});
  const tree = scaleTree(TREES.m1, log);
  const work = fresh('service-m1');
  const { config, statePath } = scaleConfig(work, tree);
  const tracked = await seededState(TREES.m1, tree, statePath, log);
  const dataDir = join(work, 'service');
  // The first start creates the dataset and its key; the files go in with the service stopped.
  const created = await startEmbeddedService({ dataDir, plan: 'enterprise', background: false });
  await created.close();
  const t0 = performance.now();
  const files = seedDataset(join(dataDir, SERVICE_DB_FILE), Number(created.datasetId), statePath);
  log(`service: ${files} files in the dataset (${tracked} tracked) in ${round1(performance.now() - t0)} ms`);
  const svc = await startEmbeddedService({ dataDir, plan: 'enterprise', background: false });
  let pages: { ms: number[]; seen: number; total: number };
  try {
    pages = await pageTimes(svc.baseUrl, svc.apiKey);
  } finally {
    await svc.close();
  }
  const sorted = [...pages.ms].sort((a, b) => a - b);
  const worst = round1(sorted.at(-1) ?? NaN);
  const mean = round1(pages.ms.reduce((a, b) => a + b, 0) / Math.max(1, pages.ms.length));
  const p99 = round1(sorted[Math.floor(sorted.length * 0.99)] ?? NaN);
  const last = round1(pages.ms.at(-2) ?? NaN);
  const first = round1(pages.ms[0] ?? NaN);
  log(
    `service pages: ${pages.ms.length} requests, first ${first} ms, mean ${mean} ms, p99 ${p99} ms, worst ${worst} ms, deepest page ${last} ms`,
  );
  const wrong =
    pages.seen !== files || pages.total !== files ? `listed ${pages.seen} files, total ${pages.total}, dataset holds ${files}` : null;
  const report = join(work, 'audit.json');
  const audit = measure(
    shell(
      `exec ${kbsync('audit', '-c', config, '--json')
        .map((a) => `'${a}'`)
        .join(' ')} > '${report}'`,
    ),
  );
  const summary = existsSync(report)
    ? (JSON.parse(readFileSync(report, 'utf8')) as { summary?: { remote: number; drift: number } }).summary
    : undefined;
  log(`audit: peak RSS ${audit.rssMiB} MiB, ${audit.wallMs} ms, exit ${audit.status}, remote ${summary?.remote}, drift ${summary?.drift}`);
  const auditProblem =
    audit.status !== 0 ? `exited ${audit.status}: ${audit.stderr}` : summary?.drift !== 0 ? `audit found drift ${summary?.drift}` : null;
  return [
    {
      ...limit(`local service: slowest GET /files/ page of 1,000 over ${label(TREES.m1)}`, worst, 'ms', 50, wrong),
      note: `${pages.ms.length} pages; the first after the start ${first} ms, mean ${mean} ms, p99 ${p99} ms, deepest page ${last} ms${wrong === null ? '' : `; ${wrong}`}`,
    },
    {
      ...limit(`peak RSS of kbsync audit, ${label(TREES.m1)} listed by the local service`, audit.rssMiB, 'MiB', 500, auditProblem),
      note: `${audit.wallMs} ms, CPU ${audit.cpuMs} ms; remote ${summary?.remote ?? '?'}, drift ${summary?.drift ?? '?'}${auditProblem === null ? '' : `; ${auditProblem}`}`,
    },
  ];
}
