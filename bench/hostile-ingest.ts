import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { FORMATS, writeFormatFile, type Format } from './format-files.js';
import { SETTLE_MS } from './hostile-figures.js';
import { kbsyncBin } from './paths.js';

/**
 * The local service (`kbsync serve`, a child process) while it parses the worst input of each type:
 * the p99 of queries sent to it meanwhile (another dataset, small), how long the file took to
 * settle and how it ended; and its resident size idle, right after a burst of 141 files of every
 * type, and once the burst has settled.
 */
export type HostileInput = {
  format: Format;
  what: string;
  settleMs: number;
  outcome: string;
  queries: number;
  p99Ms: number;
  maxMs: number;
};
export type HostileIngestResult = {
  inputs: HostileInput[];
  rss: { idleMb: number; burstMb: number; settledMb: number; files: number; burstMs: number };
};

const MIB = 1024 * 1024;

type Service = { child: ChildProcess; url: string; key: string; queryKey: string };

/** A dataset of a data folder and its key, made by `kbsync serve dataset create`. */
function createDataset(dataDir: string, name: string): string {
  const res = spawnSync(
    process.execPath,
    [kbsyncBin(), 'serve', 'dataset', 'create', '--data', dataDir, '--name', name, '--plan', 'pro', '--json'],
    {
      encoding: 'utf8',
    },
  );
  const key = (JSON.parse(res.stdout || '{}') as { apiKey?: string }).apiKey;
  if (key === undefined) throw new Error(`kbsync serve dataset create failed: ${res.stderr}`);
  return key;
}

async function startServe(dataDir: string): Promise<Service> {
  const key = createDataset(dataDir, 'hostile');
  const queryKey = createDataset(dataDir, 'queries');
  const child = spawn(process.execPath, [kbsyncBin(), 'serve', '--port', '0', '--data', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; i < 600 && !out.includes('\n'); i++) await sleep(50);
  const url = /listening on (\S+)/.exec(out)?.[1];
  if (url === undefined) throw new Error(`kbsync serve did not start: ${out}`);
  return { child, url, key, queryKey };
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round(kb / 102.4) / 10;
}

async function call(s: Service, method: string, path: string, body?: unknown, key = s.key): Promise<unknown> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

async function uploadFile(s: Service, name: string, data: Buffer, key = s.key): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)]), name);
  const res = await fetch(`${s.url}/api/v1/ext/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  const body = (await res.json()) as { id?: number };
  if (typeof body.id !== 'number') throw new Error(`upload of ${name} refused: ${JSON.stringify(body)}`);
  return body.id;
}

type FileRow = { id: number; status: string; error: string | null };
async function files(s: Service): Promise<FileRow[]> {
  return ((await call(s, 'GET', '/api/v1/ext/files/')) as { files: FileRow[] }).files;
}

const p = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0) * 10) / 10;
};

/** The worst input of each type: the deepest nesting or longest unbroken run the parser must handle, or a large valid file of a binary format. */
async function hostileInputs(dir: string): Promise<{ format: Format; what: string; name: string; data: Buffer }[]> {
  const text = (format: Format, what: string, s: string) => ({ format, what, name: `hostile.${format}`, data: Buffer.from(s) });
  const oneLine = 'x'.repeat(8 * MIB);
  const inputs = [
    text('txt', '8 MiB line without a space', oneLine),
    text('md', '8 MiB line without a space', oneLine),
    text('csv', 'a quoted field never closed, 8 MiB', `a,b\n1,"${oneLine}`),
    text('tsv', 'one row of 1M columns', `${'a\t'.repeat(1_000_000)}\n`),
    text('json', 'arrays nested 1M deep', `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`),
    text('jsonl', 'a line of objects nested 500k deep', `${'{"a":'.repeat(500_000)}1${'}'.repeat(500_000)}\n`),
    text('html', '200,000 unclosed <div>', `<p>intro</p>${'<div>'.repeat(200_000)}text`),
    text('html', '100,000 nested closed <div>', `${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}`),
    text('xml', 'elements nested 200k deep', `${'<a>'.repeat(200_000)}x${'</a>'.repeat(200_000)}`),
  ];
  for (const format of ['docx', 'xlsx', 'xls', 'parquet'] as const) {
    const path = join(dir, `large.${format}`);
    await writeFormatFile(path, format, 16 * MIB);
    inputs.push({ format, what: 'large valid file (16 MiB of content)', name: `large.${format}`, data: readFileSync(path) });
  }
  return inputs;
}

export async function runHostileIngestBench(
  o: { log?: (line: string) => void; only?: Format[]; skipBurst?: boolean; inspect?: (pid: number, when: string) => Promise<void> } = {},
): Promise<HostileIngestResult> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const work = mkdtempSync(join(tmpdir(), 'kbsync-bench-hostile-'));
  const s = await startServe(join(work, 'data'));
  try {
    const pid = s.child.pid as number;
    await sleep(1000);
    const idleMb = rssMb(pid);
    await o.inspect?.(pid, 'idle');
    // Queries go to a second dataset with one small file: what is measured is the wait, not the search.
    const queryKey = s.queryKey;
    await uploadFile(s, 'notes.txt', Buffer.from('widgets are counted every morning by the harbor'), queryKey);

    const inputs: HostileInput[] = [];
    for (const input of await hostileInputs(work)) {
      if (o.only !== undefined && !o.only.includes(input.format)) continue;
      const id = await uploadFile(s, input.name, input.data);
      const started = performance.now();
      const latencies: number[] = [];
      let row: FileRow | undefined;
      for (;;) {
        const t0 = performance.now();
        await call(s, 'POST', '/api/v1/ext/datasets/query', { query: 'widgets harbor', top_k: 3 }, queryKey);
        latencies.push(performance.now() - t0);
        row = (await files(s)).find((f) => f.id === id);
        if (row?.status === 'processed' || row?.status === 'failed' || performance.now() - started > 600_000) break;
        await sleep(10);
      }
      const settleMs = Math.round(performance.now() - started);
      const outcome = row?.status === 'failed' ? (row.error ?? 'failed').slice(0, 120) : `${row?.status}`;
      const result = {
        format: input.format,
        what: input.what,
        settleMs,
        outcome,
        queries: latencies.length,
        p99Ms: p(latencies, 0.99),
        maxMs: p(latencies, 1),
      };
      log(`  ${input.format} (${input.what}): ${settleMs} ms, ${outcome}; query p99 ${result.p99Ms} ms over ${latencies.length}`);
      inputs.push(result);
    }

    if (o.skipBurst === true) return { inputs, rss: { idleMb, burstMb: 0, settledMb: 0, files: 0, burstMs: 0 } };
    // A burst like a first sync: 141 files of every type, 64 KiB to 2 MiB of content each.
    const burst = join(work, 'burst');
    rmSync(burst, { recursive: true, force: true });
    const burstFiles: { name: string; path: string }[] = [];
    for (let i = 0; i < 141; i++) {
      const format = FORMATS[i % FORMATS.length] as Format;
      const path = `${burst}-${i}.${format}`;
      await writeFormatFile(path, format, (64 << 10) * (1 + (i % 32)));
      burstFiles.push({ name: `burst-${i}.${format}`, path });
    }
    // Generated first, then uploaded back to back: the service sees a burst.
    const ids: number[] = [];
    const burstStarted = performance.now();
    for (const f of burstFiles) ids.push(await uploadFile(s, f.name, readFileSync(f.path)));
    let burstMb = 0;
    for (;;) {
      burstMb = Math.max(burstMb, rssMb(pid));
      const rows = await files(s);
      if (ids.every((id) => rows.some((f) => f.id === id && (f.status === 'processed' || f.status === 'failed')))) break;
      await sleep(200);
    }
    burstMb = Math.max(burstMb, rssMb(pid));
    const burstMs = Math.round(performance.now() - burstStarted);
    await o.inspect?.(pid, 'burst done');
    // The pool's workers end after 2 s idle and the memory they and the burst freed is given back.
    await sleep(SETTLE_MS);
    const settledMb = rssMb(pid);
    await o.inspect?.(pid, 'settled');
    log(`  burst ${burstMs} ms; RSS idle ${idleMb} MB, burst peak ${burstMb} MB, settled ${settledMb} MB`);
    return { inputs, rss: { idleMb, burstMb, settledMb, files: ids.length, burstMs } };
  } finally {
    s.child.kill('SIGTERM');
    await new Promise((resolve) => s.child.once('exit', resolve));
    rmSync(work, { recursive: true, force: true });
  }
}

// `node .bench-build/bench/hostile-ingest.js`: this benchmark alone, its result as JSON.
if (process.argv[1]?.endsWith('hostile-ingest.js') === true) {
  // KBSYNC_BENCH_HOSTILE_ONLY=csv,xml: those inputs and no burst; KBSYNC_BENCH_HOSTILE_BURST_ONLY=1: the burst alone.
  const burstOnly = process.env.KBSYNC_BENCH_HOSTILE_BURST_ONLY === '1';
  const only = burstOnly ? [] : (process.env.KBSYNC_BENCH_HOSTILE_ONLY?.split(',') as Format[] | undefined);
  writeFileSync(1, `${JSON.stringify(await runHostileIngestBench({ only, skipBurst: !burstOnly && only !== undefined }))}\n`);
}
