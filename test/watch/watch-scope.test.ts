import { realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/shared/logger.js';
import { openState, type StateStore } from '../../src/sync/state/index.js';
import { runWatchDaemon } from '../../src/watch/daemon.js';
import type { CreateWatcher, WatcherHandlers } from '../../src/watch/watcher.js';
import { createWorkspace, type Workspace } from '../helpers/e2e-workspace.js';
import { useE2eSuite } from '../helpers/e2e-suite.js';
import { until, type LogLine } from '../helpers/daemon-children.js';
import { isUpload } from '../helpers/fault-proxy.js';
import { freshDatabase } from '../helpers/postgres.js';

const suite = useE2eSuite({ proxy: true });

/**
 * The daemon in this process, with a watcher the test drives: the events it delivers are exactly the
 * ones the test gives, so a missed event (none given for a change) is one the test chose. The files,
 * the state (SQLite) and the service (the local one) are real.
 */
async function startDaemon(ws: Workspace, baseUrl = suite.svc.url) {
  const lines: LogLine[] = [];
  const logger = createLogger({ level: 'info' }, {
    write: (l: string) => void lines.push(JSON.parse(l) as LogLine),
  } as unknown as NodeJS.WritableStream);
  const config = loadConfig(ws.configPath, {});
  const state: StateStore = openState(config.state);
  const client = createClient({ baseUrl, apiKey: (config.target as { apiKey: string }).apiKey });
  let handlers: WatcherHandlers | null = null;
  const createWatcher: CreateWatcher = async (_spec, h) => {
    handlers = h;
    return { backend: 'events', close: async () => {} };
  };
  // Whole reads of the tracked index (a kept index spares them).
  let indexReads = 0;
  const loadTrackedFilesSoon = state.loadTrackedFilesSoon.bind(state);
  state.loadTrackedFilesSoon = () => (indexReads++, loadTrackedFilesSoon());
  const abort = new AbortController();
  const done = runWatchDaemon({ config, state, logger, getClient: async () => client }, { signal: abort.signal, createWatcher });
  const cycles = (): LogLine[] => lines.filter((l) => l.msg === 'sync cycle done');
  await until('the first cycle', () => cycles().length === 1);
  const root = realpathSync(ws.docs);
  return {
    state,
    cycles,
    /** The file lines of the n-th cycle (0: the start), keyed by path. */
    filesOf(n: number): Map<string, LogLine> {
      const ends = lines.flatMap((l, i) => (l.msg === 'sync cycle done' ? [i] : []));
      const from = n === 0 ? 0 : (ends[n - 1] as number);
      return new Map(lines.slice(from, ends[n]).flatMap((l) => (l.msg === 'file' ? [[l.path as string, l] as const] : [])));
    },
    indexReads: () => indexReads,
    event: (path: string) => (handlers as WatcherHandlers | null)?.onEvent(join(root, path), 'update'),
    async stop() {
      abort.abort();
      await done;
      state.close();
    },
  };
}

/** A dataset and a workspace whose daemon the test drives: events backend, these timings, SQLite unless `state` is given. */
function drivenWorkspace(o: { debounceMs: number; rescanMinutes: number; via?: 'proxy'; state?: string }) {
  const ds = suite.svc.dataset();
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: o.via === 'proxy' ? suite.proxy.url : suite.svc.url,
    apiKey: ds.apiKey,
    config: {
      watch: { debounceMs: o.debounceMs, rescanMinutes: o.rescanMinutes, backend: 'events' },
      ...(o.state !== undefined ? { state: o.state } : {}),
    },
  });
  return { ds, ws };
}

describe('kbsync watch: a cycle after events looks at the folders they touched, the rescan at everything', () => {
  it('finds a create inside a folder just made, a folder deleted and a rename across folders; an edit no event named waits for the rescan', async () => {
    const { ds, ws } = drivenWorkspace({ debounceMs: 50, rescanMinutes: 0.05 });
    ws.write('a/one.md', '# One\n');
    ws.write('b/two.md', '# Two\n');
    ws.write('c/three.md', '# Three\n');
    ws.write('c/deep/four.md', '# Four\n');
    ws.write('x/out.md', '# Out v1\n');
    const d = await startDaemon(ws);
    try {
      expect(d.cycles()[0]).toMatchObject({ reasons: ['start'], uploaded: 5, scope: 'all' });

      // A folder made with a file inside it: only the folder's event arrives (parcel-bundler/watcher#243).
      ws.write('d/e/new.md', '# New\n');
      d.event('d');
      // A folder deleted: one event for the folder.
      rmSync(join(ws.docs, 'c'), { recursive: true });
      d.event('c');
      // A rename across folders: both paths' events.
      ws.move('a/one.md', 'b/moved.md');
      d.event('a/one.md');
      d.event('b/moved.md');
      // An edit with no event at all (missed).
      ws.write('x/out.md', '# Out v2\n');
      await until('the cycle of the events', () => d.cycles().length === 2);

      const scoped = d.cycles()[1] as LogLine;
      expect(scoped).toMatchObject({ reasons: ['changes'], scope: 'folders', uploaded: 1 });
      const files = d.filesOf(1);
      expect(files.get('d/e/new.md')).toMatchObject({ action: 'upload', outcome: 'done' });
      expect(files.get('c/three.md')).toMatchObject({ action: 'deleted' });
      expect(files.get('c/deep/four.md')).toMatchObject({ action: 'deleted' });
      expect(files.get('b/moved.md')).toMatchObject({ action: 'rename', credits: 0 });
      expect(files.has('x/out.md')).toBe(false);
      expect(scoped.creditsSpent).toBe(5);

      // The rescan walks everything: the missed edit is found; nothing else is planned again.
      await until('the rescan', () => d.cycles().length === 3, 15_000);
      expect(d.cycles()[2]).toMatchObject({ reasons: ['rescan'], scope: 'all', uploaded: 1 });
      const rescanned = d.filesOf(2);
      expect(rescanned.get('x/out.md')).toMatchObject({ action: 'upload', outcome: 'done' });
      // Rows of deleted paths stay tracked, their remote copies kept: the full plan finds them again,
      // and the log, which said so in the cycle that saw them go, does not repeat them.
      expect([...rescanned].filter(([p]) => p !== 'x/out.md').map(([p, l]) => `${p} ${String(l.action)}`)).toEqual([]);

      // The kept index knows what the cycles wrote: the same content again (its stat moved) is no upload.
      writeFileSync(join(ws.docs, 'd/e/new.md'), '# New\n');
      utimesSync(join(ws.docs, 'd/e/new.md'), new Date(), new Date(Date.now() + 5000));
      d.event('d/e/new.md');
      await until('the cycle of the touch', () => d.cycles().length === 4);
      expect(d.cycles()[3]).toMatchObject({ reasons: ['changes'], scope: 'folders', uploaded: 0, creditsSpent: 0 });
      expect(d.state.getTracked('docs', 'd/e/new.md')?.mtimeNs).not.toBe(null);
      const names = (await ds.files()).map((f) => f.name).sort();
      expect(names.filter((n) => n === 'd/e/new.md')).toHaveLength(1);
      expect(names.filter((n) => n === 'x/out.md')).toHaveLength(2);
    } finally {
      await d.stop();
    }
  });

  it('a folder named by an event and written on without events (parcel-bundler/watcher#243) is synced once it settles, in one cycle', async () => {
    const { ds, ws } = drivenWorkspace({ debounceMs: 200, rescanMinutes: 60 });
    ws.write('old.md', '# Old\n');
    const d = await startDaemon(ws);
    try {
      // Only the folder's event: its files come after, for 4 debounce periods, with none of their own.
      ws.write('new/f00.md', '# 0\n');
      d.event('new');
      for (let i = 1; i <= 16; i++) {
        await new Promise((r) => setTimeout(r, 50));
        ws.write(`new/sub/f${String(i).padStart(2, '0')}.md`, `# ${i}\n`);
      }
      await until('the cycle of the burst', () => d.cycles().length === 2);
      expect(d.cycles()[1]).toMatchObject({ reasons: ['changes'], scope: 'folders', uploaded: 17 });
      expect((await ds.files()).filter((f) => f.name.startsWith('new/'))).toHaveLength(17);
    } finally {
      await d.stop();
    }
  });

  it.each(['SQLite', 'PostgreSQL'])(
    'a rescan takes the statuses the listing gives into the kept index: a copy the service failed to process is reported, the index is not read again (%s state)',
    async (kind) => {
      const { ds, ws } = drivenWorkspace({
        debounceMs: 50,
        rescanMinutes: 0.05,
        ...(kind === 'PostgreSQL' ? { state: await freshDatabase('kept_listing') } : {}),
      });
      ws.write('a/ok.md', '# OK\n');
      const d = await startDaemon(ws);
      try {
        expect(d.state.diagnostics().journalMode.startsWith('postgresql')).toBe(kind === 'PostgreSQL');
        ws.write('a/broken.docx', 'not a zip archive at all');
        d.event('a/broken.docx');
        await until('the cycle of the event', () => d.cycles().length === 2);
        expect(d.filesOf(1).get('a/broken.docx')).toMatchObject({ action: 'upload', outcome: 'done' });
        await until('the service failed it', async () =>
          (await ds.files()).some((f) => f.name === 'a/broken.docx' && f.status === 'failed'),
        );
        const reads = d.indexReads();
        // The state still says queued: the rescan lists the dataset, and its row comes back failed.
        expect(d.state.getTracked('docs', 'a/broken.docx')?.remoteStatus).toBe('queued');
        await until('the rescan', () => d.cycles().length === 3, 15_000);
        expect(d.cycles()[2]).toMatchObject({ reasons: ['rescan'], scope: 'all', uploaded: 0 });
        expect(d.filesOf(2).get('a/broken.docx')).toMatchObject({ action: 'skip:remote-failed' });
        expect(d.state.getTracked('docs', 'a/broken.docx')?.remoteStatus).toBe('failed');
        expect(d.indexReads()).toBe(reads);
      } finally {
        await d.stop();
      }
    },
  );

  it("a file a scoped cycle failed to upload is in the next cycle's scope, whatever folder that cycle's events name", async () => {
    const { ws } = drivenWorkspace({ debounceMs: 50, rescanMinutes: 60, via: 'proxy' });
    ws.write('b/other.md', '# Other v1\n');
    const d = await startDaemon(ws, suite.proxy.url);
    try {
      suite.proxy.setHooks({
        onRequest: (req) =>
          isUpload(req) && req.body.includes('# Fails once')
            ? { kind: 'respond', status: 422, json: { detail: 'refused by the test' } }
            : { kind: 'forward' },
      });
      ws.write('a/fail.md', '# Fails once\n');
      d.event('a/fail.md');
      await until('the failed cycle', () => d.cycles().length === 2);
      expect(d.filesOf(1).get('a/fail.md')).toMatchObject({ action: 'upload', outcome: 'failed' });
      suite.proxy.setHooks({});
      // An event in another folder: its cycle looks at b, and at what the last cycle left to do.
      ws.write('b/other.md', '# Other v2\n');
      d.event('b/other.md');
      await until('the next cycle', () => d.cycles().length === 3);
      expect(d.cycles()[2]).toMatchObject({ reasons: ['changes'], scope: 'folders', uploaded: 2 });
      expect(d.filesOf(2).get('a/fail.md')).toMatchObject({ action: 'upload', outcome: 'done' });
    } finally {
      suite.proxy.setHooks({});
      await d.stop();
    }
  });

  it('an ignore file edited in a folder makes its cycle walk that folder whole: files below newly ignored are gone, those let in are sent', async () => {
    const { ws } = drivenWorkspace({ debounceMs: 50, rescanMinutes: 60 });
    ws.write('a/keep.md', '# Keep\n');
    ws.write('a/drafts/old.md', '# Old draft\n');
    ws.write('a/drafts/deep/older.md', '# Older draft\n');
    ws.write('a/private/secret-plan.md', '# Private\n');
    ws.write('a/.kbsyncignore', 'private/\n');
    const d = await startDaemon(ws);
    try {
      expect(d.cycles()[0]).toMatchObject({ uploaded: 3 });
      // One event, on the ignore file: the folders below it are under its new rules.
      ws.write('a/.kbsyncignore', 'drafts/\n');
      d.event('a/.kbsyncignore');
      await until('the cycle of the ignore file', () => d.cycles().length === 2);
      const files = d.filesOf(1);
      expect(files.get('a/drafts/old.md')).toMatchObject({ action: 'deleted' });
      expect(files.get('a/drafts/deep/older.md')).toMatchObject({ action: 'deleted' });
      expect(files.get('a/private/secret-plan.md')).toMatchObject({ action: 'upload', outcome: 'done' });
      expect(files.has('a/keep.md')).toBe(false);
    } finally {
      await d.stop();
    }
  });
});
