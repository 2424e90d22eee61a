import childProcess from 'node:child_process';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import workerThreads from 'node:worker_threads';

/*
 * setupFiles of the unit tier: a test beside its module works in memory. Starting a process or a
 * thread, opening a socket or making a temp dir throws, naming the rule, so a test that needs one
 * moves to test/ (docs/development.md, "Tests") instead of slowing the quick loop.
 */

function refuse(what: string): never {
  throw new Error(
    `a unit test (beside its module under src/) ${what}: unit tests work in memory. ` +
      'Move the test to the folder under test/ that mirrors its module (docs/development.md, "Tests").',
  );
}

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  Object.defineProperty(childProcess, name, { value: () => refuse(`started a process (child_process.${name})`), configurable: true });
}
for (const name of ['mkdtemp', 'mkdtempSync'] as const) {
  Object.defineProperty(fs, name, { value: () => refuse(`made a temp dir (fs.${name})`), configurable: true });
}
Object.defineProperty(fs.promises, 'mkdtemp', { value: () => refuse('made a temp dir (fs.promises.mkdtemp)'), configurable: true });
Object.defineProperty(net.Server.prototype, 'listen', { value: () => refuse('listened on a socket'), configurable: true });
Object.defineProperty(net.Socket.prototype, 'connect', { value: () => refuse('opened a connection'), configurable: true });
Object.defineProperty(workerThreads, 'Worker', {
  value: class {
    constructor() {
      refuse('started a worker thread');
    }
  },
  configurable: true,
});
syncBuiltinESMExports();
