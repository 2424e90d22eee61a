import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../../src/service/server.js';
import { apiFor, eventually, startHarness, tempDir, upload } from './helpers.js';

/**
 * startService resolves before its background parts (WAL checkpointer thread, processing worker,
 * webhook sender) start: they start on the next turn, so `kbsync serve` prints `listening` without
 * waiting for a thread to boot. A service closed before that turn never starts them.
 */

const dirs: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

/** Resolves after `n` turns of the event loop (each a setImmediate). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('startService background start', () => {
  it('closed in the same turn it resolved, starts nothing afterwards on the closed database', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const errors: unknown[] = [];
    const onError = (err: unknown): void => {
      errors.push(err);
    };
    process.on('uncaughtException', onError);
    try {
      const service = await startService({ dataDir: dir.path, host: '127.0.0.1', port: 0 });
      await service.close();
      await turns(5);
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(errors).toEqual([]);
  });

  it('answers a request sent as soon as it resolved, and processes a file uploaded then', async () => {
    const h = await startHarness();
    try {
      const api = apiFor(h, { plan: 'basic', credits: 100 });
      const res = await upload(api, 'first.md', '# First\n\nThe first file of a service just started.\n');
      const processed = await eventually(async () => {
        const list = await api.call('GET', '/api/v1/ext/files/');
        const f = (list.body.files as { id: number; status: string }[]).find((x) => x.id === res.body.id);
        return f?.status === 'processed' ? f : undefined;
      }, 30_000);

      expect(res.status).toBe(201);
      expect(processed.status).toBe('processed');
    } finally {
      await h.close();
    }
  });
});
