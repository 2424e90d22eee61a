import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { median } from './measure.js';

/** A generated benchmark tree: where it is, how many files and bytes it holds. */
export type BenchTree = { dir: string; files: number; bytes: number; full: boolean; generatedMs: number | null };

/** Supported types mostly, some unsupported ones, in rough real-world proportions. */
const EXTENSIONS = ['md', 'md', 'md', 'md', 'txt', 'txt', 'json', 'csv', 'html', 'xml', 'md', 'txt', 'json', 'png', 'pdf', 'ts'];

/** A small deterministic PRNG (mulberry32): the same tree on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Sizes: 1–4 KB each by default (fast to generate, for CI); with `full`, a log-normal spread
 * (median ~11 KB, mean ~24 KB, a few files of several MB), ~2.4 GB per 100k files.
 */
function sizeOf(random: () => number, full: boolean): number {
  if (!full) return 1024 + Math.floor(random() * 3072);
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.min(8 << 20, Math.max(64, Math.floor(Math.exp(9.3 + 1.25 * normal))));
}

/**
 * The tree under `base/tree` (made once, then reused: `base/tree.complete` marks it whole): `files`
 * files in 3 levels of folders (~200 per folder), a root .gitignore and an ignored build/ folder.
 */
export function ensureBenchTree(base: string, files: number, full: boolean): BenchTree {
  const dir = join(base, 'tree');
  const marker = join(base, 'tree.complete');
  if (existsSync(marker)) {
    const { bytes } = JSON.parse(readFileSync(marker, 'utf8')) as { bytes: number };
    return { dir, files, bytes, full, generatedMs: null };
  }
  rmSync(base, { recursive: true, force: true });
  const t0 = performance.now();
  const random = prng(0x6b627379);
  const text = Buffer.from('Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. '.repeat(110_000));
  let bytes = 0;
  const perDir = 200;
  const dirs = Math.ceil(files / perDir);
  for (let d = 0; d < dirs; d++) {
    const folder = join(dir, `area-${d % 20}`, `topic-${Math.floor(d / 20) % 25}`, `part-${Math.floor(d / 500)}`);
    mkdirSync(folder, { recursive: true });
    for (let f = 0; f < perDir && d * perDir + f < files; f++) {
      const i = d * perDir + f;
      const ext = EXTENSIONS[Math.floor(random() * EXTENSIONS.length)] ?? 'md';
      const size = sizeOf(random, full);
      const header = Buffer.from(`file ${i}\n`);
      const offset = Math.floor(random() * (text.length - size));
      const body = size <= text.length ? text.subarray(offset, offset + Math.max(0, size - header.length)) : text;
      writeFileSync(join(folder, `doc-${i}.${ext}`), Buffer.concat([header, body]));
      bytes += header.length + body.length;
    }
  }
  writeFileSync(join(dir, '.gitignore'), 'build/\n*.tmp\n');
  mkdirSync(join(dir, 'build'), { recursive: true });
  writeFileSync(join(dir, 'build', 'out.md'), 'generated');
  writeFileSync(marker, JSON.stringify({ files, bytes }));
  return { dir, files, bytes, full, generatedMs: Math.round(performance.now() - t0) };
}

/** Where a benchmark's options (or KBSYNC_BENCH_FILES and KBSYNC_BENCH_SMALL) put its tree. */
export type BenchTreeOptions = { files?: number; full?: boolean; dir?: string };

/** The benchmark tree its options name, made if missing: the size, the kind of files, the base folder. */
export function benchTreeOf(options: BenchTreeOptions): { files: number; full: boolean; base: string; tree: BenchTree } {
  const files = options.files ?? Number(process.env.KBSYNC_BENCH_FILES ?? 100_000);
  const full = options.full ?? process.env.KBSYNC_BENCH_SMALL !== '1';
  const base = options.dir ?? join(tmpdir(), `kbsync-bench-${files}-${full ? 'full' : 'small'}`);
  return { files, full, base, tree: ensureBenchTree(base, files, full) };
}

/**
 * The reference walk: readdirSync with file types and one lstatSync per file, nothing else
 * (no rules, no objects); the files and folders it counted.
 */
export function bareWalk(dir: string, counts = { files: 0, folders: 0 }): { files: number; folders: number } {
  counts.folders++;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = `${dir}/${entry.name}`;
    if (entry.isDirectory()) bareWalk(abs, counts);
    else if (lstatSync(abs, { bigint: true }).isFile()) counts.files++;
  }
  return counts;
}

/** bareWalk `rounds` times: its median time, and what it counted. */
export function timeBareWalk(dir: string, rounds = 3): { medianMs: number | null; files: number; folders: number } {
  const walks: number[] = [];
  let counts = { files: 0, folders: 0 };
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    counts = bareWalk(dir);
    walks.push(performance.now() - t0);
  }
  return { medianMs: median(walks), ...counts };
}
