/**
 * Preloaded (`--import`) in a worker thread started from TypeScript sources (see worker-entry.ts):
 * resolves a relative `./x.js` import of a `.ts` module to `./x.ts` when that is the file there, as
 * tsc's NodeNext resolution does. Compiled kbsync never loads it.
 */
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts') === true) {
      const ts = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
      if (existsSync(fileURLToPath(ts))) return nextResolve(ts.href, context);
    }
    return nextResolve(specifier, context);
  },
});
