import { describe, expect, it } from 'vitest';
import { createClient, type KnowledgeClient } from '../../src/client/index.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/shared/logger.js';
import { openState } from '../../src/sync/state/index.js';
import { createChokidarWatcher } from '../../src/watch/chokidar-watcher.js';
import { runWatchDaemon } from '../../src/watch/daemon.js';
import { createWorkspace } from '../helpers/e2e-workspace.js';
import { useE2eSuite } from '../helpers/e2e-suite.js';
import { until } from '../helpers/daemon-children.js';

const suite = useE2eSuite();

describe('the daemon hands on no snapshot once it has ended', () => {
  it('a call that outlives the grace period ends its cycle after runWatchDaemon returned: no snapshot is published then', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { watch: { debounceMs: 50, shutdownGraceSeconds: 1, backend: 'polling' } },
    });
    ws.write('a.md', '# A\n');
    const state = openState(ws.statePath);
    const real = createClient({ baseUrl: suite.svc.url, apiKey: ds.apiKey, logger: silentLogger() });
    // The upload is held until the test lets it go: past the grace period, after the daemon returned.
    let asked = false;
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let settled = false;
    const client = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop !== 'uploadFile') return Reflect.get(target, prop, receiver) as unknown;
        return async (...args: Parameters<KnowledgeClient['uploadFile']>) => {
          asked = true;
          await held;
          try {
            return await target.uploadFile(...args);
          } finally {
            setTimeout(() => (settled = true), 500);
          }
        };
      },
    });
    const stop = new AbortController();
    let ended = false;
    const late: string[] = [];
    const done = runWatchDaemon(
      { config: loadConfig(ws.configPath, {}), state, logger: silentLogger(), getClient: async () => client },
      {
        signal: stop.signal,
        createWatcher: createChokidarWatcher,
        onSnapshot: (s) => {
          if (ended) late.push(JSON.stringify(s.lastSync));
        },
      },
    );
    try {
      await until('the upload asked for', () => asked);
      stop.abort();
      const result = await done;
      ended = true;
      expect(result.graceExpired).toBe(true);
      release();
      await until('the held call settled and its cycle ended', () => settled);
      expect(late).toEqual([]);
    } finally {
      release();
      await done.catch(() => {});
      await new Promise((r) => setTimeout(r, 200));
      await real.close();
      state.close();
    }
  });
});
