// Copies into OUT/node_modules only the installed packages the bundle can load at run time, without
// what nothing runs (source maps, type declarations, docs, native sources and other platforms' builds).
//   node scripts/image-modules.js OUT
// The container image (Dockerfile) runs it: bin/kbsync.js loads only dist/bundle/, which has most
// packages inlined; the rest are named there in imports, require() and createRequire()(),
// and those, with their own dependencies, are what is kept. Keeping too much costs only size.
import { builtinModules } from 'node:module';
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolvePath(fileURLToPath(new URL('..', import.meta.url)));
const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/image-modules.js OUT');
const modules = join(root, 'node_modules');
const bundle = join(root, 'dist', 'bundle');

const installed = new Set();
for (const name of readdirSync(modules)) {
  if (name.startsWith('.')) continue;
  if (name.startsWith('@')) for (const sub of readdirSync(join(modules, name))) installed.add(`${name}/${sub}`);
  else installed.add(name);
}

const builtins = new Set(builtinModules);
const wanted = new Set();
// import ... from 'x', import('x'), require('x') and createRequire(...)('x'), subpaths included.
const specifier = /(?:\brequire\(|\bfrom ?|\bimport\(|\)\()\s*["']((?:@[a-z0-9._-]+\/)?[a-z0-9._-]+)(?:\/[^"']*)?["']/g;
for (const file of readdirSync(bundle)) {
  if (!/\.c?js$/.test(file)) continue;
  for (const [, name] of readFileSync(join(bundle, file), 'utf8').matchAll(specifier)) {
    if (installed.has(name) && !builtins.has(name)) wanted.add(name);
  }
}

// Their dependencies, found the way Node finds them: nested first, then each folder above.
const resolve = (dir, name) => {
  for (let at = dir; at.startsWith(root); at = dirname(at)) {
    if (basename(at) === 'node_modules') continue;
    const candidate = join(at, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (at === root) break;
  }
  return undefined; // an optional or peer dependency that is not installed
};
const kept = new Set();
const visit = (dir) => {
  if (kept.has(dir)) return;
  kept.add(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const name of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies })) {
    const found = resolve(dir, name);
    if (found) visit(found);
  }
};
for (const name of wanted) visit(join(modules, name));

// Nested folders are copied with their parent's tree; only top-level ones are copied here.
const platform = `${process.platform}-${process.arch}`;
const dropFile = /\.(map|d\.ts|d\.mts|d\.cts|md|markdown|flow)$|^(tsconfig.*\.json|\.eslintrc.*|\.npmignore|\.prettierrc.*)$/i;
const dropDir = new Set(['test', 'tests', '__tests__', 'docs', 'example', 'examples', '.github', 'benchmark', 'benchmarks']);
const filter = (src) => {
  const rel = src.slice(root.length + 1);
  const base = rel.split(/[\\/]/).pop();
  if (statSync(src).isDirectory()) {
    if (dropDir.has(base)) return false;
    // better-sqlite3: its prebuilt binary for this platform is what loads; SQLite's sources and the
    // build folder of npm's implicit node-gyp run are not needed.
    if (/better-sqlite3[\\/](deps|src|build)$/.test(rel)) return false;
    return true;
  }
  if (/better-sqlite3[\\/]prebuilds[\\/]/.test(rel) && base !== `${platform}.node`) return false;
  return !dropFile.test(base);
};
rmSync(join(out, 'node_modules'), { recursive: true, force: true });
for (const dir of kept) {
  const rel = dir.slice(root.length + 1);
  if (rel.split('node_modules').length > 2) continue;
  cpSync(dir, join(out, rel), { recursive: true, filter });
}
process.stdout.write(`image-modules: ${kept.size} packages for ${wanted.size} named in the bundle: ${[...wanted].sort().join(', ')}\n`);
