// Bundles the compiled CLI (dist/, from tsc) into dist/bundle/, which bin/kbsync.js runs.
//
// Why: a command's start-up is dominated by loading modules one file at a time. Unbundled, a plan
// loads ~190 files (ours, zod's, yaml's...) for ~250 ms before doing any work; bundled, the same
// code loads in a handful of files in ~120 ms (measured with `npm run bench`, docs/benchmarks.md).
//
// zod is imported as `import * as z from 'zod'` (a lint rule keeps it so): its named `z` export is
// one object holding every export, 50 locales included, which no bundler can trim: bundled, zod
// took 755 KB that way and takes 196 KB now (~25 ms less start-up for every command).
//
// Code split by dynamic import() stays split (the service, git, the paid-call machinery load only
// when a command needs them). Every file lands flat in dist/bundle/, so the worker threads' entries
// (src/**/*-worker.ts) are found beside the code that starts them (workerEntry() of
// src/shared/worker-entry.ts). Each worker is one self-contained CommonJS file, `.cjs` (package.json's
// "type": "module" does not apply to it): loaded synchronously, a worker posted its first message
// ~4 ms sooner than from ES module chunks (24 -> 20 ms, the walk-ahead helper, interleaved runs).
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bundle`;
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));

// Left as imports of node_modules: native code (better-sqlite3, @parcel/watcher); packages that locate files of
// their own at run time (pino's transports); and the ones only a paid call or a git source needs.
const external = [
  'better-sqlite3',
  // node-postgres: loaded by the PostgreSQL state's worker only (it requires pg-native optionally, which is not installed).
  'pg',
  '@parcel/watcher',
  'pino',
  'undici',
  'simple-git',
  'chokidar',
  'p-queue',
];

const common = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  platform: 'node',
  target: 'node22',
  external,
  sourcemap: 'linked',
  logLevel: 'warning',
};
// `kbsync --version` without reading package.json at every start (src/cli/program.ts); the bundled
// workers' file suffix (src/shared/worker-entry.ts).
const define = { KBSYNC_BUNDLED_VERSION: JSON.stringify(version), KBSYNC_BUNDLED_WORKER_SUFFIX: JSON.stringify('.cjs') };

rmSync(outdir, { recursive: true, force: true });
await build({
  ...common,
  entryPoints: { main: 'dist/cli/main.js' },
  splitting: true,
  format: 'esm',
  define,
  // Bundled CommonJS packages (yaml, commander...) call require() for Node's own modules.
  banner: { js: "import { createRequire as __kbsyncRequire } from 'node:module'; const require = __kbsyncRequire(import.meta.url);" },
});
await build({
  ...common,
  entryPoints: {
    'tracked-worker': 'dist/sync/state/sqlite/tracked-worker.js',
    'walk-ahead-worker': 'dist/sync/sources/walk-ahead-worker.js',
    'stat-pool-worker': 'dist/sync/sources/stat-pool-worker.js',
    'hash-worker': 'dist/sync/sources/hash-worker.js',
    'checkpoint-worker': 'dist/service/store/checkpoint-worker.js',
    'pg-worker': 'dist/sync/state/pg/pg-worker.js',
    'office-worker': 'dist/service/ingest/parsers/office-worker.js',
    'ingest-worker': 'dist/service/ingest/ingest-worker.js',
    'convert-worker': 'dist/convert/convert-worker.js',
  },
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  // import.meta.url is the worker file's own URL, in the same folder as the rest of the bundle.
  define: { ...define, 'import.meta.url': '__kbsyncWorkerUrl' },
  banner: { js: "const __kbsyncWorkerUrl = require('node:url').pathToFileURL(__filename).href;" },
});
