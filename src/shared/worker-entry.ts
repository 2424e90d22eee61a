import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Set by scripts/bundle.js: the suffix of the bundled workers' files (".cjs"); undefined elsewhere. */
declare const KBSYNC_BUNDLED_WORKER_SUFFIX: string | undefined;

/**
 * Worker threads run modules of their own (`*-worker.ts`): type-checked and linted like the rest,
 * compiled beside their starters into dist/, and bundled into dist/bundle/ (scripts/bundle.js),
 * where every file lands flat. So a starter finds its worker's entry beside itself, compiled,
 * bundled or not: `workerEntry('hash-worker', import.meta.url)`. Run from TypeScript sources
 * (vitest), the entry is the `.ts` file, which Node 24 strips of its types; ts-source-hooks.ts
 * resolves its `./x.js` imports to the `.ts` files beside them.
 */
export function workerEntry(name: string, starterUrl: string): URL {
  const suffix =
    typeof KBSYNC_BUNDLED_WORKER_SUFFIX === 'string' ? KBSYNC_BUNDLED_WORKER_SUFFIX : starterUrl.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${name}${suffix}`, starterUrl);
}

/** Loaded first in a worker started from TypeScript sources (see workerEntry). */
const TS_SOURCE_HOOKS = new URL('./ts-source-hooks.ts', import.meta.url);

/**
 * Starts a worker running `code`: an entry module (workerEntry), or source text (a test's stand-in
 * for one, which may import the real modules). Throws when it cannot start, as `new Worker` does;
 * from TypeScript sources, also on a Node that cannot strip types.
 */
export function startWorker(code: URL | string, options: WorkerOptions = {}): Worker {
  const fromSources = typeof code === 'string' ? import.meta.url.endsWith('.ts') : code.pathname.endsWith('.ts');
  if (!fromSources) return new Worker(code, { ...options, eval: typeof code === 'string' });
  if (process.features.typescript === false) throw new Error('this Node.js cannot run TypeScript sources in a worker thread');
  // An entry module gets the hooks preloaded; source text (run as CommonJS, where --import is not run) requires them first.
  if (typeof code === 'string')
    return new Worker(`require(${JSON.stringify(fileURLToPath(TS_SOURCE_HOOKS))});\n${code}`, { ...options, eval: true });
  return new Worker(code, { ...options, execArgv: [...(options.execArgv ?? []), '--import', TS_SOURCE_HOOKS.href] });
}
