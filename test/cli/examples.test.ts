import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCli } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the bundled example configs', () => {
  it.each([['examples/kbsync.yaml'], ['sync.config.example.yaml']])('%s passes kbsync config check', async (file) => {
    const run = await runCli(['config', 'check', '-c', file], { cwd: ROOT });

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it('examples/kbsync.yaml keeps its state and service data under examples/.kbsync and leaves drafts out', async () => {
    const run = await runCli(['config', 'check', '-c', 'examples/kbsync.yaml'], { cwd: ROOT });

    const config = parse(run.stdout) as {
      state: string;
      target: { kind: string; dataDir: string };
      sources: { path: string; exclude: string[] }[];
    };
    expect(config.target.kind).toBe('embedded');
    expect(config.state).toBe(`${ROOT}examples/.kbsync/state.db`);
    expect(config.target.dataDir).toBe(`${ROOT}examples/.kbsync/service`);
    expect(config.sources).toMatchObject([{ path: `${ROOT}examples/docs`, exclude: ['drafts/**'] }]);
  });
});
