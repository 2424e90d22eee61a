import { appendFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Source } from '../src/config/schema.js';
import { unusedLoopbackPort, writeConfig } from './cli-runner.js';
import { seedSyncedState, type SeededState } from './seed-state.js';

/** A daemon bench's work folder: the tree's state seeded as synced and a config on the embedded target. */
export type DaemonWorkspace = { work: string; statePath: string; source: Source; config: string; seeded: SeededState };

/** Makes `base/name` anew: the state of `treeDir` seeded as synced, and kbsync.yaml with `watch` settings. */
export async function seededDaemonWorkspace(o: {
  base: string;
  name: string;
  treeDir: string;
  watch: { debounceMs: number; rescanMinutes: number; watcher?: string };
  log: (line: string) => void;
}): Promise<DaemonWorkspace> {
  const work = join(o.base, o.name);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const statePath = join(work, 'state', 'state.db');
  const source: Source = { name: 'bench', path: o.treeDir, include: ['**/*'], exclude: [], followSymlinks: false };
  const seeded = await seedSyncedState(statePath, source, join(work, 'state'));
  o.log(`seeded ${seeded.files.length} tracked files`);
  const config = writeConfig(join(work, 'kbsync.yaml'), {
    treeDir: o.treeDir,
    statePath,
    target: { kind: 'embedded', dataDir: join(work, 'service') },
  });
  const watcher = o.watch.watcher === undefined ? '' : `, watcher: ${o.watch.watcher}`;
  appendFileSync(config, `watch: { debounceMs: ${o.watch.debounceMs}, rescanMinutes: ${o.watch.rescanMinutes}${watcher} }\n`);
  return { work, statePath, source, config, seeded };
}

/**
 * The config of a plan of nothing (an empty folder, its state seeded, a remote target nobody listens
 * on, which an unchanged plan never calls): the fixed start of node and kbsync that every plan pays.
 */
export async function emptyFolderConfig(work: string, source: Source): Promise<string> {
  const emptyDir = join(work, 'empty-source');
  mkdirSync(emptyDir, { recursive: true });
  const emptyState = join(work, 'empty-state', 'state.db');
  const empty = writeConfig(join(work, 'empty.yaml'), {
    treeDir: emptyDir,
    statePath: emptyState,
    target: { kind: 'remote', port: await unusedLoopbackPort() },
  });
  await seedSyncedState(emptyState, { ...source, path: emptyDir }, join(work, 'empty-state'));
  return empty;
}
