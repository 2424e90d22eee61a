// Fails when the value imports of src/ form a cycle (docs/architecture.md, "Dependency rules").
// A value import is an `import` or `export ... from` that is not type-only: the ones that run a module
// before its importer. Type-only imports are erased; a dynamic import() runs later, so neither can
// make a module see another half-evaluated. Under `verbatimModuleSyntax` (tsconfig.json) an import whose
// names are all marked `type` inline is kept as `import {} from`, so only `import type` is erased. Specifiers are resolved by TypeScript with tsconfig.json's options.
// Usage: node scripts/check-cycles.js [root ...] (default: src)
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const roots = process.argv.length > 2 ? process.argv.slice(2) : ['src'];
const configPath = ts.findConfigFile(process.cwd(), ts.sys.fileExists, 'tsconfig.json');
if (configPath === undefined) throw new Error('check-cycles: no tsconfig.json above the working directory');
const { options } = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, process.cwd());

/** Source modules under `dir`; tests and test utilities are left out (nothing imports them). */
function modulesUnder(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...modulesUnder(p));
    else if (/\.ts$/.test(e.name) && !/\.d\.ts$|\.test\.ts$|\.test-util\.ts$/.test(e.name)) out.push(resolve(p));
  }
  return out;
}

/** The specifiers of the module's value imports and re-exports. */
function valueImports(file) {
  const sf = ts.createSourceFile(file, ts.sys.readFile(file) ?? '', ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const specs = [];
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st)) {
      const c = st.importClause;
      const typeOnly =
        c !== undefined &&
        (c.isTypeOnly ||
          (!verbatim &&
            c.name === undefined &&
            c.namedBindings !== undefined &&
            ts.isNamedImports(c.namedBindings) &&
            c.namedBindings.elements.length > 0 &&
            c.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) specs.push(st.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier !== undefined) {
      const c = st.exportClause;
      const typeOnly =
        st.isTypeOnly || (c !== undefined && ts.isNamedExports(c) && c.elements.length > 0 && c.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) specs.push(st.moduleSpecifier.text);
    }
  }
  return specs;
}

const verbatim = options.verbatimModuleSyntax === true;
const files = roots.flatMap((r) => modulesUnder(resolve(r)));
const known = new Set(files);
const edges = new Map();
for (const f of files) {
  const to = [];
  for (const spec of valueImports(f)) {
    const r = ts.resolveModuleName(spec, f, options, ts.sys).resolvedModule;
    if (r !== undefined && known.has(resolve(r.resolvedFileName))) to.push(resolve(r.resolvedFileName));
  }
  edges.set(f, to);
}

// Tarjan's strongly connected components: each component of more than one module (or a module
// importing itself) holds a cycle.
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function visit(v) {
  idx.set(v, index);
  low.set(v, index);
  index++;
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)) {
    if (!idx.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const comp = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1 || edges.get(v).includes(v)) cycles.push(comp);
  }
}
for (const f of files) if (!idx.has(f)) visit(f);

/** One path around the component, from its first module back to it, for the message. */
function loopIn(comp) {
  const inComp = new Set(comp);
  const start = [...comp].sort()[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of edges.get(v)) {
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = prev.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (inComp.has(w) && !prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

if (cycles.length > 0) {
  const rel = (f) => relative(process.cwd(), f);
  for (const comp of cycles) {
    console.error(`import cycle among ${comp.length} module(s): ${loopIn(comp).map(rel).join(' -> ')}`);
  }
  console.error(
    `check-cycles: ${cycles.length} value import cycle(s) in ${roots.join(', ')}. Break each by moving what both modules need ` +
      'into a module below them, or by making an import type-only (`import type`) when it only names types.',
  );
  process.exit(1);
}
console.log(`check-cycles: no value import cycle among ${files.length} modules`);
