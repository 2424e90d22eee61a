import { mkdirSync, symlinkSync, watch } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/shared/logger.js';
import { openState, type StateStore } from '../../src/sync/state/index.js';
import { createChokidarWatcher } from '../../src/watch/chokidar-watcher.js';
import { createNodeWatcher, createNodeWatcherWith, type WatchFolder } from '../../src/watch/node-watcher.js';
import { createParcelWatcher } from '../../src/watch/parcel-watcher.js';
import { runWatchDaemon, type DaemonResult } from '../../src/watch/daemon.js';
import type { DaemonSnapshot } from '../../src/watch/snapshot.js';
import type { CreateWatcher, WatcherHandlers } from '../../src/watch/watcher.js';
import { createGitOrigin, GIT_ENV } from '../helpers/e2e-git.js';
import type { E2eDataset } from '../helpers/e2e-service.js';
import { createWorkspace, type Workspace } from '../helpers/e2e-workspace.js';
import { useE2eSuite } from '../helpers/e2e-suite.js';
import { until } from '../helpers/daemon-children.js';

const suite = useE2eSuite();

type Running = { snapshot(): DaemonSnapshot; logs: Record<string, unknown>[]; stop(): Promise<DaemonResult>; state: StateStore };

/** runWatchDaemon in this process against the local service, with a watcher backend of the test's choosing. */
function startDaemon(ws: Workspace, ds: E2eDataset, createWatcher: CreateWatcher, o: { now?: () => Date } = {}): Running {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level: 'info' }, sink);
  const state = openState(ws.statePath, o.now === undefined ? {} : { now: o.now });
  const config = loadConfig(ws.configPath, {});
  const client = createClient({ baseUrl: suite.svc.url, apiKey: ds.apiKey, logger });
  const stop = new AbortController();
  let snapshot: DaemonSnapshot | null = null;
  const done = runWatchDaemon(
    { config, state, logger, getClient: async () => client, ...(o.now === undefined ? {} : { now: o.now }) },
    {
      signal: stop.signal,
      createWatcher,
      onSnapshot: (s) => (snapshot = structuredClone(s)),
      ...(o.now === undefined ? {} : { nowMs: () => (o.now as () => Date)().getTime() }),
    },
  );
  return {
    snapshot: () => snapshot as DaemonSnapshot,
    logs,
    state,
    stop: async () => {
      stop.abort();
      try {
        return await done;
      } finally {
        await client.close();
        state.close();
      }
    },
  };
}

/** A backend that starts fine and delivers nothing (a network mount, a Docker bind mount). */
const deaf: CreateWatcher = async (spec) => ({ backend: spec.backend, close: async () => {} });

const uploadedNames = async (ds: E2eDataset): Promise<string[]> => (await ds.files()).map((f) => f.name).sort();

describe('kbsync watch, the daemon in-process against the local service', () => {
  it('a watcher that delivers nothing: the start-up probe sees no event and the folder is polled instead, logged once with the reason', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { watch: { debounceMs: 50, probeTimeoutMs: 300, pollIntervalMs: 100 } },
    });
    ws.write('a.md', '# A\n');
    const backends: string[] = [];
    const createWatcher: CreateWatcher = async (spec, handlers) => {
      backends.push(spec.backend);
      return spec.backend === 'events' ? deaf(spec, handlers) : createChokidarWatcher(spec, handlers);
    };
    const d = startDaemon(ws, ds, createWatcher);
    await until('the first sync', () => d.snapshot()?.ready === true);
    ws.write('b.md', '# B\n');
    await until('b.md uploaded through polling', async () => (await uploadedNames(ds)).includes('b.md'));
    const result = await d.stop();

    expect(backends).toEqual(['events', 'polling']);
    expect(d.snapshot().watches).toEqual([
      expect.objectContaining({
        source: 'docs',
        backend: 'polling',
        note: expect.stringContaining('no file-system event arrived for a probe file within 300 ms'),
      }),
    ]);
    expect(d.logs.filter((l) => String(l.msg).includes('polling instead'))).toHaveLength(1);
    expect(result.graceExpired).toBe(false);
    expect(await uploadedNames(ds)).toEqual(['a.md', 'b.md']);
  });

  for (const [library, createWatcher] of [
    ['node', createNodeWatcher],
    ['@parcel/watcher', createParcelWatcher],
  ] as const)
    it(`a source folder reached through a symlink is watched with file-system events (${library}), not polled`, async () => {
      const ds = suite.svc.dataset();
      const root = suite.temp.make();
      const ws = createWorkspace(root, {
        baseUrl: suite.svc.url,
        apiKey: ds.apiKey,
        config: { sources: [{ name: 'docs', path: './linked' }], watch: { debounceMs: 50, rescanMinutes: 60 } },
      });
      symlinkSync(ws.docs, join(root, 'linked'));
      ws.write('a.md', '# A\n');
      const d = startDaemon(ws, ds, createWatcher);
      await until('the first sync', () => d.snapshot()?.ready === true);
      ws.write('b.md', '# B\n');
      await until('b.md uploaded after its event', async () => (await uploadedNames(ds)).includes('b.md'));
      await d.stop();

      expect(d.snapshot().watches).toEqual([expect.objectContaining({ source: 'docs', backend: 'events', note: null })]);
      expect(d.snapshot().counters.events).toBeGreaterThan(0);
      expect(d.snapshot().counters.watcherErrors).toBe(0);
      expect(await uploadedNames(ds)).toEqual(['a.md', 'b.md']);
    });

  it('a watch that fails with ENOSPC (out of inotify watches): a message naming the sysctl, polling instead, no exit', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { watch: { debounceMs: 50, backend: 'events', pollIntervalMs: 100 } },
    });
    let handlers: WatcherHandlers | undefined;
    const backends: string[] = [];
    const createWatcher: CreateWatcher = async (spec, h) => {
      backends.push(spec.backend);
      if (spec.backend === 'events') {
        handlers = h;
        return deaf(spec, h);
      }
      return createChokidarWatcher(spec, h);
    };
    const d = startDaemon(ws, ds, createWatcher);
    await until('the first sync', () => d.snapshot()?.ready === true);
    handlers?.onError(Object.assign(new Error('watch failed'), { code: 'ENOSPC' }));
    await until('the switch to polling', () => d.snapshot().watches[0]?.backend === 'polling');
    ws.write('late.md', '# late\n');
    await until('late.md uploaded through polling', async () => (await uploadedNames(ds)).includes('late.md'));
    await d.stop();

    expect(backends).toEqual(['events', 'polling']);
    const advice = d.logs.find((l) => String(l.msg).includes('fs.inotify.max_user_watches'));
    expect(advice?.level).toBe(50);
    expect(d.snapshot().counters.watcherErrors).toBe(1);
  });

  it('the node backend out of inotify watches for a new folder: the sysctl advice, that folder polled, its files synced', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { watch: { debounceMs: 50, backend: 'events', pollIntervalMs: 100, rescanMinutes: 60 } },
    });
    ws.write('a.md', '# A\n');
    // fs.inotify.max_user_watches as it would be with room for the source's root alone.
    let room = 1;
    const limited: WatchFolder = (dir, listener) => {
      if (room-- <= 0)
        throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${dir}'`), { code: 'ENOSPC' });
      return watch(dir, (kind, name) => listener(kind, name));
    };
    const d = startDaemon(ws, ds, createNodeWatcherWith(limited));
    await until('the first sync', () => d.snapshot()?.ready === true);
    mkdirSync(join(ws.docs, 'new', 'deeper'), { recursive: true });
    await until('the new folders polled', () => d.snapshot().watches[0]?.folders?.polled === 2);
    ws.write('new/deeper/late.md', '# late\n');
    await until('late.md uploaded through polling', async () => (await uploadedNames(ds)).includes('new/deeper/late.md'));
    ws.write('b.md', '# B\n');
    await until('b.md uploaded by events', async () => (await uploadedNames(ds)).includes('b.md'));
    await d.stop();

    expect(d.logs.find((l) => String(l.msg).includes('fs.inotify.max_user_watches'))?.level).toBe(50);
    // The root keeps its watch: the source is not switched to polling as a whole.
    expect(d.snapshot().watches).toEqual([
      expect.objectContaining({
        backend: 'events',
        folders: { polled: 2, watched: 1 },
        note: expect.stringContaining('2 of 3 folders polled'),
      }),
    ]);
  });

  it('a watcher that drops every event: the periodic rescan (watch.rescanMinutes) finds the change', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { watch: { backend: 'events', rescanMinutes: 0.01 } },
    });
    const d = startDaemon(ws, ds, deaf);
    await until('the first sync', () => d.snapshot()?.ready === true);
    ws.write('missed.md', '# nobody told us\n');
    await until('missed.md uploaded by a rescan', async () => (await uploadedNames(ds)).includes('missed.md'));
    await d.stop();

    const cycle = d.logs.find(
      (l) => l.msg === 'sync cycle done' && l.uploaded === 1 && Array.isArray(l.reasons) && l.reasons.includes('rescan'),
    );
    expect(cycle).toBeDefined();
    expect(d.snapshot().counters.rescans).toBeGreaterThan(0);
    expect(d.snapshot().counters.events).toBe(0);
  });

  it('work deferred by the day cap starts when the next UTC day opens, and the log says so', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { budget: { maxCreditsPerRun: 1000, maxCreditsPerDay: 10, maxCreditsPerMonth: 1000 }, watch: { backend: 'events' } },
    });
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    ws.write('c.md', '# C\n');
    // A clock 1.5 s before midnight UTC that runs at the real pace: the day rolls over during the test.
    const offsetMs = Date.UTC(2030, 0, 1) - 1500 - Date.now();
    const now = (): Date => new Date(Date.now() + offsetMs);
    const d = startDaemon(ws, ds, deaf, { now });
    await until('the first sync', () => d.snapshot()?.ready === true);
    const afterFirst = (await uploadedNames(ds)).length;
    await until('the deferred file uploaded after midnight', async () => (await uploadedNames(ds)).length === 3);
    await d.stop();

    expect(afterFirst).toBe(2);
    const deferredLine = d.logs.find((l) => l.msg === 'work deferred by the budget: it starts when the period opens');
    expect(deferredLine).toMatchObject({ period: 'day', at: '2030-01-01T00:00:00.000Z', files: 1 });
    expect(d.logs.some((l) => l.msg === 'budget period rolled over: starting the deferred work')).toBe(true);
    expect(
      d.logs.find((l) => l.msg === 'sync cycle done' && Array.isArray(l.reasons) && l.reasons.includes('budget-rollover')),
    ).toMatchObject({ uploaded: 1 });
  });

  it('a git source is fetched every pollSeconds and synced when its ref moves, with no file-system event', async () => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
    const ds = suite.svc.dataset();
    const root = suite.temp.make();
    const origin = createGitOrigin(root, { 'guide.md': '# Guide\n' });
    const ws = createWorkspace(root, {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main', pollSeconds: 1 } }], watch: { rescanMinutes: 60 } },
    });
    const d = startDaemon(ws, ds, deaf);
    await until('the first sync', () => d.snapshot()?.ready === true);
    const first = await uploadedNames(ds);
    origin.commit({ 'news.md': '# News\n' }, 'add news');
    await until('news.md uploaded after a poll', async () => (await uploadedNames(ds)).includes('news.md'));
    await d.stop();
    vi.unstubAllEnvs();

    expect(first).toEqual(['guide.md']);
    expect(d.logs.find((l) => l.msg === 'file' && l.path === 'news.md')).toMatchObject({ action: 'upload', outcome: 'done' });
    expect(
      d.logs.find((l) => l.msg === 'sync cycle done' && l.uploaded === 1 && Array.isArray(l.reasons) && l.reasons.includes('git-poll')),
    ).toBeDefined();
    expect(d.snapshot().counters.events).toBe(0);
  });
});
