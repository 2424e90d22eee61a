import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The kbsync checkout this benchmark belongs to (found upwards from this file, compiled or not). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'kbsync') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('bench: cannot find the kbsync checkout above this file');
    dir = up;
  }
}

/** The executable users run (it loads the compiled dist/). */
export function kbsyncBin(): string {
  return join(repoRoot(), 'bin', 'kbsync.js');
}
