import { spawn } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient } from '../src/client/index.js';

/**
 * Upload memory benchmark: a 1 GiB (sparse) file is uploaded with the client to a local HTTP server
 * on 127.0.0.1 that drains and counts the body, while RSS is sampled every 50 ms. The client streams
 * from disk, so the peak must stay under 150 MB whatever the file's size.
 *
 * The server runs in a process of its own, as a real service does: in this one, the 64 KiB buffers
 * it receives the body in (16,384 of them) wait for the GC beside the client's and were most of the
 * peak once the client read into reused buffers (src/client/multipart.ts).
 */

/** A server that drains each request's body and answers 201 with the byte count as the file's `size`. */
const SERVER_SOURCE = `
const server = require('node:http').createServer((req, res) => {
  let received = 0;
  req.on('data', (chunk) => (received += chunk.length));
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 1, name: 'big.bin', size: received, sha256: null, status: 'queued', credits_charged: 0 }));
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

export const RSS_LIMIT_MB = 150;
const MB = 1024 * 1024;

/** Peak RSS during the upload, the process's RSS just before it (server and client ready), throughput, bytes received. */
export type UploadMemoryResult = { peakRssMb: number; baselineRssMb: number; mbPerSec: number; bytes: number };

/** Uploads a sparse file of `bytes` (default 1 GiB) and returns peak RSS, throughput and bytes received. */
export async function runUploadMemoryBench(bytes = 1024 * MB): Promise<UploadMemoryResult> {
  const dir = await mkdtemp(join(tmpdir(), 'kbsync-bench-'));
  const file = join(dir, 'big.bin');
  const fh = await open(file, 'w');
  await fh.truncate(bytes);
  await fh.close();

  const server = spawn(process.execPath, ['-e', SERVER_SOURCE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    server.stdout.once('data', (line: Buffer) => resolve(Number(line.toString().trim())));
    server.once('exit', (code) => reject(new Error(`the bench server exited (${code}) before listening`)));
  });
  const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'bench-key' });

  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  try {
    const started = performance.now();
    const received = (await client.uploadFile({ path: file, name: 'big.bin' })).size ?? 0;
    const seconds = (performance.now() - started) / 1000;
    // The sampler can miss a short spike between ticks; the kernel's high-water mark cannot.
    peak = Math.max(peak, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
    if (received < bytes) throw new Error(`server received ${received} bytes, expected at least ${bytes}`);
    return {
      peakRssMb: Math.round((peak / MB) * 10) / 10,
      baselineRssMb: Math.round((baseline / MB) * 10) / 10,
      mbPerSec: Math.round((bytes / MB / seconds) * 10) / 10,
      bytes: received,
    };
  } finally {
    clearInterval(sampler);
    await client.close();
    server.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await runUploadMemoryBench();
  const ok = r.peakRssMb < RSS_LIMIT_MB;
  console.log(
    `upload ${(r.bytes / MB).toFixed(0)} MiB: peak RSS ${r.peakRssMb} MB (limit ${RSS_LIMIT_MB}), ${r.mbPerSec} MiB/s ${ok ? 'OK' : 'FAIL'}`,
  );
  process.exitCode = ok ? 0 : 1;
}
