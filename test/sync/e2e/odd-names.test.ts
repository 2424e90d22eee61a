import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type ChildExit } from '../../helpers/kbsync-child.js';
import { logsOf, until, useChildren } from '../../helpers/daemon-children.js';

/*
 * Files that are not documents beside the ones that are: the lock files office suites write next to an
 * open document, and names that are not valid UTF-8 (made here from raw bytes, as a Latin-1 system, an
 * old archive or a Samba share makes them). Each gets a plan line with its reason; none is uploaded.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());
beforeAll(() => ensureDist(), 300_000);
const children = useChildren();

const CONFIG = `target: { kind: embedded, plan: basic, dataDir: .kbsync/service, startCredits: 1000 }
state: .kbsync/state.db
sources:
  - name: docs
    path: ./docs
watch: { debounceMs: 200 }
upload: { requestsPerSecond: 100 }
`;

type Item = { path: string; action: string; reason: string; credits: number };

function project(): { root: string; docs: string } {
  const root = temp.make();
  writeFileSync(join(root, 'kbsync.yaml'), CONFIG);
  const docs = join(root, 'docs');
  mkdirSync(docs, { recursive: true });
  writeFileSync(join(docs, 'report.docx'), 'not really a docx, never uploaded by this test');
  writeFileSync(join(docs, 'notes.md'), '# Notes\n');
  return { root, docs };
}

/** The path `dir/` + `prefix`, the raw byte 0xE9 (é in Latin-1, not UTF-8), then `suffix`, as bytes. */
const latin1Path = (dir: string, prefix: string, suffix: string): Buffer =>
  Buffer.concat([Buffer.from(`${dir}/${prefix}`), Buffer.from([0xe9]), Buffer.from(suffix)]);

function latin1Name(dir: string, prefix: string, suffix: string, content: string): void {
  writeFileSync(latin1Path(dir, prefix, suffix), content);
}

const run = (root: string, ...args: string[]): Promise<ChildExit> => spawnKbsync(args, root).exited;

async function planAll(root: string): Promise<Item[]> {
  const r = await run(root, 'plan', '--all', '--json');
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { items: Item[] }).items;
}

describe('office lock files', () => {
  it('skips Office owner files and LibreOffice lock files as ignored, saying why, in plan --all and explain', async () => {
    const { root, docs } = project();
    for (const name of ['~$report.docx', '~$book.xlsx', '~$deck.pptx', '.~lock.report.docx#']) writeFileSync(join(docs, name), 'owner\n');

    const items = await planAll(root);

    const byPath = new Map(items.map((i) => [i.path, i]));
    for (const name of ['~$report.docx', '~$book.xlsx', '~$deck.pptx'])
      expect(byPath.get(name), name).toMatchObject({
        action: 'skip:ignored',
        credits: 0,
        reason: expect.stringMatching(/^ignored: a Microsoft Office owner file \(~\$\.\.\.\)/) as unknown,
      });
    expect(byPath.get('.~lock.report.docx#')).toMatchObject({
      action: 'skip:ignored',
      reason: expect.stringMatching(/^ignored: a LibreOffice lock file \(\.~lock\.\.\.#\)/) as unknown,
    });
    expect(byPath.get('report.docx')?.action).toBe('upload');

    const explained = await run(root, 'explain', '~$report.docx');
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toMatch(/decision: +skip:ignored: ignored: a Microsoft Office owner file/);

    const synced = await run(root, 'sync', '--json');
    expect(synced.code, synced.stderr).toBe(0);
    const summary = (JSON.parse(synced.stdout) as { summary: { uploaded: number; creditsSpent: number } }).summary;
    expect(summary).toMatchObject({ uploaded: 2, creditsSpent: 10 });
  }, 120_000);
});

describe('a file whose name is not valid UTF-8', () => {
  it('gets a skip:bad-name line with its bytes and how to rename it; explain finds it as the shell gives its name', async () => {
    const { root, docs } = project();
    latin1Name(docs, 'caf', '.md', '# Café\n');
    mkdirSync(join(docs, 'old'));
    const folder = latin1Path(join(docs, 'old'), 'r', 'sum');
    mkdirSync(folder);
    writeFileSync(Buffer.concat([folder, Buffer.from('/inside.md')]), '# inside\n');
    writeFileSync(join(docs, 'old', 'fine.md'), '# fine\n');

    const items = await planAll(root);

    const bad = items.find((i) => i.path === 'caf\\xE9.md');
    expect(bad, JSON.stringify(items.map((i) => i.path))).toMatchObject({ action: 'skip:bad-name', credits: 0 });
    expect(bad?.reason).toMatch(/not valid UTF-8/);
    expect(bad?.reason).toContain("mv $'caf\\xE9.md' NEW-NAME");
    // A folder of such a name: its files cannot be looked at until it is renamed.
    expect(items.find((i) => i.path === 'old/r\\xE9sum')).toMatchObject({ action: 'skip:bad-name' });
    expect(items.find((i) => i.path === 'old/fine.md')?.action).toBe('upload');

    // The text plan lists it too.
    const text = await run(root, 'plan', '--all');
    expect(text.stdout).toMatch(/skip:bad-name +0 +caf\\xE9\.md/);

    // As the shell completes it (the raw bytes: Node reads them as U+FFFD), and as the plan prints it.
    const globbed = await spawnKbsync(['explain'], root, {}, ['sh', '-c', 'exec "$0" "$@" docs/caf*.md']).exited;
    expect(globbed.code, globbed.stderr).toBe(0);
    expect(globbed.stdout).toMatch(/decision: +skip:bad-name: its name is not valid UTF-8/);
    expect(globbed.stdout).toMatch(/remote: +none: a name that is not UTF-8 has no name on the service/);
    const printed = await run(root, 'explain', 'caf\\xE9.md');
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/decision: +skip:bad-name/);

    const synced = await run(root, 'sync', '--json');
    const summary = (JSON.parse(synced.stdout) as { summary: { uploaded: number; creditsSpent: number } }).summary;
    expect(summary).toMatchObject({ uploaded: 3, creditsSpent: 15 });
  }, 120_000);

  it('the daemon logs it once, not at every cycle that walks its folder', async () => {
    const { root, docs } = project();
    latin1Name(docs, 'caf', '.md', '# Café\n');
    const k = spawnKbsync(['watch'], root);
    children.push(k);
    const cycles = (): number => logsOf(k).filter((l) => l.msg === 'sync cycle done').length;
    await until('the first cycle', () => cycles() === 1, 60_000);

    // Cycles of the same folder: a new file beside it, then a second one of those names.
    writeFileSync(join(docs, 'more.md'), '# More\n');
    await until('a cycle of the folder', () => cycles() === 2);
    latin1Name(docs, 'd', 'j\u00e0.md', '# Déjà\n');
    await until('a cycle of the new name', () => cycles() === 3);
    writeFileSync(join(docs, 'last.md'), '# Last\n');
    await until('one more cycle', () => cycles() === 4);
    k.child.kill('SIGTERM');
    await k.exited;

    const lines = logsOf(k).filter((l) => l.msg === 'file' && l.action === 'skip:bad-name');
    expect(lines.map((l) => l.path)).toEqual(['caf\\xE9.md', 'd\\xE9j\u00e0.md']);
  }, 120_000);
});
