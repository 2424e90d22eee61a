import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { loadConfig } from '../src/config/load.js';
import { openState } from '../src/sync/state/index.js';
import { startDaemonHttp } from '../src/watch/http/http-server.js';
import { createPageAccess } from '../src/watch/http/page/access.js';
import { createDaemonPage } from '../src/watch/http/page/page-routes.js';
import { createPageSource } from '../src/watch/http/page/page-source.js';
import { statusDocument } from '../src/watch/http/page/status-document.js';
import { newSnapshot } from '../src/watch/snapshot.js';

/** What bench/status-page.ts measured: the daemon's side of the page's first paint at `files` tracked files. */
export type StatusPageBenchResult = {
  files: number;
  /** The first GET / of a fresh process (code not compiled yet): request sent to the last byte of the HTML read, over loopback. */
  firstMs: number;
  /** GET / with the tracked rows read again from the state, as the first after each cycle is: median and slowest of `runs`. */
  medianMs: number;
  maxMs: number;
  /** GET / between two cycles (the rows read already), median of `runs`. */
  cachedMedianMs: number;
  /** The status document alone (what `kbsync status --json` builds), median of `runs`: the reference. */
  statusMedianMs: number;
  htmlBytes: number;
  runs: number;
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const round = (ms: number): number => Math.round(ms * 10) / 10;

function get(port: number, path: string): Promise<{ ms: number; bytes: number; status: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}` } }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ ms: performance.now() - t0, bytes, status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A state of `files` tracked files (processed, a few failed, a few deferred, 40 days of ledger), the
 * daemon's HTTP server with its page on port 0 in this process, and GET / timed from here.
 */
export async function runStatusPageBench(o: {
  files?: number;
  runs?: number;
  log?: (line: string) => void;
}): Promise<StatusPageBenchResult> {
  const files = o.files ?? 10_000;
  const runs = o.runs ?? 21;
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-bench-page-'));
  try {
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'kbsync.yaml'), 'target:\n  kind: embedded\nsources:\n  - name: docs\n    path: ./docs\n');
    const config = loadConfig(join(dir, 'kbsync.yaml'), {});
    const state = openState(join(dir, '.kbsync/state.db'));
    const rows = Array.from({ length: files }, (_, i) => ({
      source: 'docs',
      path: `dir${i % 100}/file-${i}.md`,
      size: 2000 + i,
      mtimeNs: String(1_700_000_000_000_000_000n + BigInt(i)),
      inode: i + 1,
      sha256: i.toString(16).padStart(64, '0'),
      remoteName: `dir${i % 100}/file-${i}.md`,
      remoteId: String(i + 1),
      remoteStatus: i % 500 === 0 ? ('failed' as const) : ('processed' as const),
      remoteError: i % 500 === 0 ? 'parse_failed: not a valid DOCX file' : null,
      reprocessAttempts: 0,
      lastAction: i % 700 === 0 ? 'defer:over-budget' : 'upload',
      lastReason: i % 700 === 0 ? 'over the day cap' : 'new file',
    }));
    state.upsertTrackedMany(rows);
    // A running daemon has read its tracked files for its first cycle before anyone opens the page.
    state.loadTrackedFiles();
    o.log?.(`${files} tracked rows written`);
    const snapshot = { ...newSnapshot(new Date().toISOString()), ready: true };
    snapshot.watches.push({ source: 'docs', root: join(dir, 'docs'), backend: 'events', note: null });
    let port = 0;
    const source = createPageSource({
      state,
      config: () => config,
      snapshot: () => snapshot,
      syncing: () => false,
      version: 'bench',
      configPath: join(dir, 'kbsync.yaml'),
      http: () => `127.0.0.1:${port}`,
    });
    const page = createDaemonPage({
      access: createPageAccess({ host: '127.0.0.1', token: null, port: () => port }),
      logger: { warn: () => {} },
      deps: {
        model: source.model,
        status: source.status,
        hello: () => ({ pid: process.pid, startedAt: snapshot.startedAt }),
        explain: () => Promise.reject(new Error('not measured')),
        rescan: () => ({ message: '' }),
        retry: () => Promise.reject(new Error('not measured')),
        query: () => Promise.reject(new Error('not measured')),
      },
    });
    const http = await startDaemonHttp({
      host: '127.0.0.1',
      port: 0,
      ready: () => ({ ready: true, unreachable: null }),
      metrics: new Registry(),
      page,
    });
    port = http.port;
    try {
      const first = await get(port, '/');
      if (first.status !== 200) throw new Error(`GET / answered ${first.status}`);
      const times: number[] = [];
      const cached: number[] = [];
      for (let i = 0; i < runs; i++) {
        source.invalidate();
        times.push((await get(port, '/')).ms);
        cached.push((await get(port, '/')).ms);
      }
      const statusTimes: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        statusDocument(state, config, null);
        statusTimes.push(performance.now() - t0);
      }
      o.log?.(
        `first GET / ${round(first.ms)} ms; after a cycle median ${round(median(times))} ms; between cycles ${round(median(cached))} ms`,
      );
      return {
        files,
        firstMs: round(first.ms),
        medianMs: round(median(times)),
        maxMs: round(Math.max(...times)),
        cachedMedianMs: round(median(cached)),
        statusMedianMs: round(median(statusTimes)),
        htmlBytes: first.bytes,
        runs,
      };
    } finally {
      await http.close();
      state.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
