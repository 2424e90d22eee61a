import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '../../scripts/check-cycles.js');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Writes the modules into a fresh folder and runs the check over it: its exit code and what it printed. */
function check(modules: Record<string, string>): { code: number; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-cycles-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(modules)) writeFileSync(join(dir, name), text);
  try {
    const out = execFileSync(process.execPath, [script, dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { code: err.status, out: err.stdout + err.stderr };
  }
}

describe('scripts/check-cycles.js', () => {
  it('fails on a value import cycle and names the modules around it', () => {
    const r = check({
      'a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'b.ts': "import { c } from './c.js';\nexport const b = 1 + c;\n",
      'c.ts': "export { a } from './a.js';\nexport const c = 2;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/import cycle among 3 module\(s\): \S*a\.ts -> \S*b\.ts -> \S*c\.ts -> \S*a\.ts/);
  });

  it('passes type-only cycles, dynamic imports and a tree without cycles', () => {
    const r = check({
      'a.ts': "import type { B } from './b.js';\nimport { type C } from './c.js';\nexport type A = B | C;\nexport const a = 1;\n",
      'b.ts': "import { a } from './a.js';\nexport type B = { a: typeof a };\n",
      'c.ts': "export type { A } from './a.js';\nexport type C = string;\nexport const load = () => import('./b.js');\n",
    });
    expect(r).toEqual({ code: 0, out: 'check-cycles: no value import cycle among 3 modules\n' });
  });

  it('counts an import whose names are all inline `type` as a value import (kept as `import {}` by verbatimModuleSyntax)', () => {
    const r = check({
      'a.ts': "import { type B } from './b.js';\nexport type A = B;\nexport const a = 1;\n",
      'b.ts': "import { a } from './a.js';\nexport type B = number;\nexport const b = a;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/import cycle among 2 module\(s\)/);
  });
});
