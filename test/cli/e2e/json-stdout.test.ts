import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KBSYNC_BIN, ensureDist } from '../../helpers/build-dist.js';

/**
 * `kbsync plan --json` written by the real process to a file and to a pipe whose reader lags (so
 * that chunks queue in the stream): the same bytes, valid UTF-8, every path as the folder has it.
 * Enough files for several chunks of the report, named with non-ASCII letters, an emoji and
 * characters JSON escapes.
 */
const FILES = 1200;
const nameOf = (i: number): string => ['ünï-', 'çødé-日本-', 'emoji-😀-', 'quote"back\\slash-', 'plain-'][i % 5] + `${i}.md`;

let root: string;
beforeAll(async () => {
  await ensureDist();
  root = mkdtempSync(join(tmpdir(), 'kbsync-json-stdout-'));
  mkdirSync(join(root, 'docs'));
  for (let i = 0; i < FILES; i++) writeFileSync(join(root, 'docs', nameOf(i)), `# ${i}\n`);
  writeFileSync(
    join(root, 'kbsync.yaml'),
    'target: { kind: embedded, dataDir: ./service }\nstate: ./state/state.db\n' +
      'budget: { maxCreditsPerRun: 1000000, maxCreditsPerDay: 1000000, maxCreditsPerMonth: 1000000 }\n' +
      'sources:\n  - { name: docs, path: ./docs }\n',
  );
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * Runs `plan --json` with stdout into `out` (a file's descriptor) or, when null, into a shell pipe
 * (64 KB) whose reader starts only after `lagSeconds`: kbsync's writes then queue in its stream.
 */
function planJson(out: number | null, lagSeconds = 0): Promise<{ code: number | null; stdout: Buffer }> {
  const env = { PATH: process.env.PATH ?? '', HOME: root };
  const child =
    out !== null
      ? spawn(process.execPath, [KBSYNC_BIN, 'plan', '--json'], { cwd: root, env, stdio: ['ignore', out, 'ignore'] })
      : spawn('sh', ['-c', `"$0" "$1" plan --json | (sleep ${lagSeconds}; cat)`, process.execPath, KBSYNC_BIN], {
          cwd: root,
          env,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
  const parts: Buffer[] = [];
  child.stdout?.on('data', (b: Buffer) => parts.push(b));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(parts) }));
  });
}

describe('the --json report on the process stdout', () => {
  it('is the same UTF-8 document into a file and into a lagging pipe, with every path intact', async () => {
    const file = join(root, 'plan.json');
    const fd = openSync(file, 'w');
    let toFile: { code: number | null };
    try {
      toFile = await planJson(fd);
    } finally {
      closeSync(fd);
    }
    const fromFile = readFileSync(file);
    const piped = await planJson(null, 3);

    expect(toFile.code).toBe(0);
    expect(piped.code).toBe(0);
    expect(fromFile.length).toBeGreaterThan(256 * 1024); // several chunks, more than a pipe holds
    expect(piped.stdout.equals(fromFile)).toBe(true);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(fromFile);
    const doc = JSON.parse(text) as { summary: { uploaded: number }; items: { path: string }[] };
    expect(doc.summary.uploaded).toBe(FILES);
    expect(doc.items.map((i) => i.path).sort()).toEqual(Array.from({ length: FILES }, (_, i) => nameOf(i)).sort());
    // The layout: one item per line.
    expect(text.split('\n').filter((l) => l.startsWith('    {"source":'))).toHaveLength(FILES);
  }, 120_000);
});
