#!/usr/bin/env node
// dist/bundle/ is dist/ bundled by scripts/bundle.js (npm run build): it starts in half the time.
import { main } from '../dist/bundle/main.js';

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
process.exitCode = await main(process.argv);
