import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/build-dist.js';

/** Every file under src/ that `tsc -p tsconfig.build.json` compiles into dist/ (its roots and what they import). */
function compiledSources(): string[] {
  const configPath = join(REPO_ROOT, 'tsconfig.build.json');
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (config === undefined) throw new Error('tsconfig.build.json: unreadable');
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const src = join(REPO_ROOT, 'src');
  return program
    .getSourceFiles()
    .map((f) => f.fileName)
    .filter((f) => !relative(src, dirname(f)).startsWith('..'))
    .map((f) => relative(REPO_ROOT, f));
}

describe('the build (dist/)', () => {
  it('compiles no test and no test-only helper', () => {
    const compiled = compiledSources();

    expect(compiled).toContain('src/cli/main.ts');
    expect(compiled.filter((f) => /\.test\.ts$|\.test-util\.ts$|\/test-support\.ts$/.test(f))).toEqual([]);
  }, 30_000);
});
