#!/usr/bin/env node
// A namespace import: on a Node too old for enableCompileCache, the version check below must still run.
import * as nodeModule from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Refuse an old Node before anything native loads: better-sqlite3 13 crashes on Node 20 instead of
// saying why. The floor is package.json's `engines` (test/cli/e2e/node-version.test.ts keeps them equal).
const NODE_FLOOR = 22;
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= NODE_FLOOR)) {
  process.stderr.write(
    `kbsync: needs Node.js ${NODE_FLOOR} or later, and this is Node.js ${process.versions.node} (${process.execPath}).\n` +
      `Install Node.js ${NODE_FLOOR} or 24 (the current LTS), or run kbsync through npm (npx kbsync, npm run ...) in this project, which brings Node.js 24.\n`,
  );
  process.exit(2);
}

// A reader that goes away early (`kbsync --help | head -1`) is not a crash: once stdout or stderr
// reports EPIPE nothing more can be shown, so end quietly with the exit code the run has so far.
// The exit waits for the current turn, so a run that is just finishing still sets its own code.
let ending = false;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code !== 'EPIPE') throw err;
    if (ending) return;
    ending = true;
    setImmediate(() => process.exit());
  });
}
// V8's compiled code for the bundle (and the service's modules), kept on disk from one run to the next:
// compiling the CLI's modules was ~17 ms of every start (main-thread CPU of `plan --json` of an empty
// folder: 101 ms without, 85 ms with, medians of 10). In the user's own cache folder, not Node's default
// os.tmpdir()/node-compile-cache, where another user of the machine could plant code for kbsync to run.
// NODE_COMPILE_CACHE names another folder, NODE_DISABLE_COMPILE_CACHE=1 turns it off. Best effort: it
// never throws (an unwritable folder leaves it off), and a changed file is compiled again.
const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
nodeModule.enableCompileCache(process.env.NODE_COMPILE_CACHE || join(cacheHome, 'kbsync', 'node-compile-cache'));
// dist/bundle/ is dist/ bundled by scripts/bundle.js (npm run build): it starts in half the time.
const { main } = await import('../dist/bundle/main.js');
process.exitCode = await main(process.argv);
