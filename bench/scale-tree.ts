import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Source } from '../src/config/schema.js';
import { seedSyncedState } from './seed-state.js';

/** One tree of the scale tier: folders x files of Markdown, sizes from minKb to maxKb. */
export type ScaleTreeSpec = { key: string; folders: number; perFolder: number; minKb: number; maxKb: number };

export const TREES = {
  m1: { key: 'm1', folders: 1000, perFolder: 1000, minKb: 1, maxKb: 7 },
  k20: { key: 'k20', folders: 20, perFolder: 1000, minKb: 1, maxKb: 16 },
  k100: { key: 'k100', folders: 100, perFolder: 1000, minKb: 1, maxKb: 7 },
} satisfies Record<string, ScaleTreeSpec>;

/** Where the tier caches its trees, copies and seeded states: KBSYNC_SCALE_DIR or os.tmpdir()/kbsync-scale. */
export function scaleBase(): string {
  return process.env.KBSYNC_SCALE_DIR ?? join(tmpdir(), 'kbsync-scale');
}

/**
 * The tree's folder: KBSYNC_SCALE_TREE_<KEY> (e.g. KBSYNC_SCALE_TREE_M1, read only) when set,
 * else generated once under the base dir (a `.complete` marker says it is whole).
 */
export function scaleTree(spec: ScaleTreeSpec, log: (l: string) => void): string {
  const given = process.env[`KBSYNC_SCALE_TREE_${spec.key.toUpperCase()}`];
  if (given !== undefined && given !== '') return given;
  const dir = join(scaleBase(), spec.key, 'docs');
  const marker = join(scaleBase(), spec.key, '.complete');
  if (existsSync(marker)) return dir;
  log(`generating ${spec.folders * spec.perFolder} files under ${dir}`);
  let seed = 1;
  const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const line = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n';
  for (let d = 0; d < spec.folders; d++) {
    const folder = join(dir, `d${String(d).padStart(4, '0')}`);
    mkdirSync(folder, { recursive: true });
    for (let f = 0; f < spec.perFolder; f++) {
      const bytes = Math.round((spec.minKb + random() * (spec.maxKb - spec.minKb)) * 1024);
      const head = `# Note ${d}-${f}\n\n`;
      writeFileSync(join(folder, `n${f}.md`), (head + line.repeat(Math.ceil(bytes / line.length))).slice(0, bytes));
    }
  }
  writeFileSync(marker, '');
  return dir;
}

/** An identical copy of the tree (same mtimes, `cp -a`), made once: rsync -an's other side. */
export function scaleCopy(spec: ScaleTreeSpec, tree: string): string {
  const copy = join(scaleBase(), spec.key, 'copy');
  const marker = join(scaleBase(), spec.key, '.copy-complete');
  if (!existsSync(marker)) {
    mkdirSync(copy, { recursive: true });
    const res = spawnSync('cp', ['-a', `${tree}/.`, copy]);
    if (res.status !== 0) throw new Error(`cp -a failed: ${String(res.stderr)}`);
    writeFileSync(marker, '');
  }
  return copy;
}

/** Folders in the tree, itself included. */
export function folderCount(tree: string): number {
  let n = 1;
  for (const e of readdirSync(tree, { withFileTypes: true })) if (e.isDirectory()) n += folderCount(join(tree, e.name));
  return n;
}

export const SOURCE_NAME = 'bench';

/**
 * A state seeded as fully synced (bench/seed-state.ts), cached beside the tree and copied to
 * `statePath`, so that each figure starts from the same bytes. Returns the tracked file count.
 */
export async function seededState(spec: ScaleTreeSpec, tree: string, statePath: string, log: (l: string) => void): Promise<number> {
  const cacheDir = join(scaleBase(), spec.key, 'seeded');
  const cached = join(cacheDir, 'state.db');
  const countFile = join(cacheDir, 'tracked.txt');
  if (!existsSync(countFile)) {
    log(`seeding a synced state for ${tree} (cached in ${cacheDir})`);
    mkdirSync(cacheDir, { recursive: true });
    const source: Source = { name: SOURCE_NAME, path: tree, include: ['**/*'], exclude: [], followSymlinks: false };
    const seeded = await seedSyncedState(cached, source, cacheDir);
    writeFileSync(countFile, String(seeded.files.length));
  }
  mkdirSync(join(statePath, '..'), { recursive: true });
  copyFileSync(cached, statePath);
  if (existsSync(`${cached}-wal`)) copyFileSync(`${cached}-wal`, `${statePath}-wal`);
  return Number(readFileSync(countFile, 'utf8'));
}
