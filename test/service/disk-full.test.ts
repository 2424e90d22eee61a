import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../src/service/server.js';
import { bindApi, credits, upload, type Harness } from './helpers.js';

// The service's data folder on a small file system of its own (tmpfs, mounted as root), filled and freed.
const dir = mkdtempSync(join(tmpdir(), 'kbsync-service-disk-'));
let service: RunningService | null = null;
afterAll(async () => {
  await service?.close();
  execFileSync('umount', ['-l', dir]);
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `path` until the disk has at most `leaveBytes` free. */
function fillLeaving(path: string, leaveBytes: number): void {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) {
      const free = Number(execFileSync('df', ['--output=avail', '-B1', dir]).toString().split('\n')[1]);
      if (free <= leaveBytes) return;
      writeSync(fd, block, 0, Math.min(block.length, Math.max(4096, free - leaveBytes)));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

describe('the local service on a full disk', () => {
  it('a file whose chunks find no space waits in the queue, never failed, and is processed once there is space: no reprocess to pay', async () => {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', dir]);
    } catch (err) {
      throw new Error(`this test mounts a small tmpfs and needs root (run the suite as root, as CI does): ${String(err)}`);
    }
    service = await startService({ dataDir: join(dir, 'data'), host: '127.0.0.1', port: 0 });
    const harness = { service } as Harness;
    const { datasetId, apiKey } = service.admin.createDataset({ name: 'full', plan: 'pro', credits: 1000 });
    const api = bindApi(harness, datasetId, apiKey);
    const before = await credits(api);

    // Room for the stored copy (2 MB of prose), not for its chunks and their full-text index.
    const text = Array.from({ length: 20_000 }, (_, i) => `Paragraph ${i} says something of its own about topic ${i % 97}.`).join('\n\n');
    const filler = join(dir, 'filler');
    fillLeaving(filler, Buffer.byteLength(text) + 1024 * 1024);
    const res = await upload(api, 'big.md', text);
    expect(res.status).toBeLessThan(300);
    const id = res.body.id as number;
    const seen = new Set<string>();
    const statusNow = async (): Promise<string> => {
      const r = await api.call('GET', '/api/v1/ext/files/');
      const status = (r.body.files as { id: number; status: string }[]).find((f) => f.id === id)?.status ?? 'missing';
      seen.add(status);
      return status;
    };
    // It is tried, finds no space, and waits.
    for (let i = 0; i < 40; i++) {
      await statusNow();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen.has('failed')).toBe(false);
    expect(['queued', 'processing']).toContain(await statusNow());

    rmSync(filler);
    const deadline = Date.now() + 150_000;
    while ((await statusNow()) !== 'processed') {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(seen.has('failed')).toBe(false);
    // The upload alone was paid: nothing asked for a reprocess.
    const costOfUpload = before - (await credits(api));
    expect(costOfUpload).toBeGreaterThan(0);
    const search = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'Paragraph 19999 topic', top_k: 1 } });
    expect(search.status).toBe(200);
  }, 240_000);
});
