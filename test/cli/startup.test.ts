import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** Packages too slow to load for `kbsync --help`: commands import them with `await import()`. */
const HEAVY_PACKAGES = ['zod', 'yaml', '@fastify/busboy', 'pino', 'better-sqlite3', 'undici', 'simple-git', 'chokidar', 'p-queue'];

/** Every module main.ts loads before running a command: its static, non-type imports, transitively. */
function staticImportGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/^(?:import|export)\s+(?!type\s)([^;]*?)\s*from\s+'([^']+)';/gms)) {
      const [, clause = '', specifier = ''] = match;
      if (
        /^\{[^}]*\}$/s.test(clause) &&
        clause
          .slice(1, -1)
          .split(',')
          .every((part) => part.trim() === '' || part.trim().startsWith('type '))
      )
        continue;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else if (!specifier.startsWith('node:'))
        packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? specifier));
    }
  };
  visit(entry);
  return { files, packages };
}

describe('start-up cost', () => {
  it('main.ts loads no heavy package and no service, sync or client module before a command runs', () => {
    const { files, packages } = staticImportGraph(MAIN);

    expect([...packages].filter((p) => HEAVY_PACKAGES.includes(p))).toEqual([]);
    expect([...files].filter((f) => /\/src\/(service|sync|client)\//.test(f))).toEqual([]);
    expect([...files].some((f) => f.endsWith('/src/cli/commands/init.ts'))).toBe(true);
  });
});
