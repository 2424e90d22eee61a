import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createGitOrigin, GIT_ENV } from '../../helpers/e2e-git.js';
import { createWorkspace, itemOf, pathsWith } from '../../helpers/e2e-workspace.js';
import { printFigures } from '../../helpers/figures.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

/**
 * The promise "nothing is read outside a source root", end to end: files outside the roots hold a
 * marker, and every way a source could reach them is laid out (links to a file, relative and
 * absolute; a chain of links; a link to a folder; a link to an ancestor of the root; an ignore file
 * that is a link out; globs naming `..` or an absolute path; in a git source, committed links out of
 * the checkout and out of its subdir, and a subdir of `..`), with followSymlinks on. After plan, sync
 * and explain, the marker must be nowhere in the service's data folder or the state folder, and the
 * outside files' SHA-256 nowhere in the state: they were not uploaded, and not even hashed.
 */

const suite = useE2eSuite();
// kbsync runs in-process: its git must not see this machine's git config either.
beforeEach(() => {
  for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** Every regular file under `dir`, recursively (links not followed). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

describe('nothing read outside a source root', () => {
  it('links, chains, folder links, ancestors, ignore files, globs and git subdirs never bring an outside file in', async () => {
    const root = suite.temp.make('kbsync-root-');
    const marker = `OUTSIDE-MARKER-${Date.now().toString(36)}-never-synced`;
    const gitMarker = `GIT-OUTSIDE-SUBDIR-MARKER-${Date.now().toString(36)}`;
    // Outside every source root.
    const outside = join(root, 'outside');
    mkdirSync(join(outside, 'sub'), { recursive: true });
    const outsideFiles: Record<string, string> = {
      'marker.md': `# Outside\n${marker}\n`,
      'sub/deep.md': `# Deep\n${marker} deep\n`,
      rules: 'a.md\n', // ignore rules: read, they would leave a.md out
    };
    for (const [path, content] of Object.entries(outsideFiles)) writeFileSync(join(outside, path), content);

    // A git repository: docs/ is the source root (subdir); other/ is outside it.
    mkdirSync(join(root, 'git'));
    const origin = createGitOrigin(join(root, 'git'), {
      'docs/inside.md': '# Inside the subdir\n',
      'other/marker.md': `# Other\n${gitMarker}\n`,
    });
    symlinkSync('../other/marker.md', join(origin.work, 'docs', 'up.md'));
    symlinkSync(join(outside, 'marker.md'), join(origin.work, 'docs', 'abs.md'));
    // From <state>/git/repo/docs/ up five folders is `root`, which holds outside/.
    symlinkSync('../../../../../outside/marker.md', join(origin.work, 'docs', 'rel.md'));
    origin.commit({}, 'links out of the subdir and out of the checkout');

    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(join(root, 'ws'), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: {
        sources: [
          { name: 'docs', path: './docs', followSymlinks: true, include: ['**/*', '../outside/**', `${outside}/**`, '../../**'] },
          { name: 'repo', git: { url: origin.bare, ref: 'main', subdir: 'docs' }, followSymlinks: true },
        ],
      },
    });
    ws.write('a.md', '# A\nalpha\n');
    ws.write('real.md', '# Real\ninside the root\n');
    const docs = ws.docs;
    symlinkSync('real.md', join(docs, 'ok-link.md')); // inside: followed
    symlinkSync('../../outside/marker.md', join(docs, 'rel-out.md'));
    symlinkSync(join(outside, 'marker.md'), join(docs, 'abs-out.md'));
    // A chain: chain.md -> inner/hop.md -> outside.
    mkdirSync(join(docs, 'inner'));
    symlinkSync('../../../outside/marker.md', join(docs, 'inner', 'hop.md'));
    symlinkSync('inner/hop.md', join(docs, 'chain.md'));
    symlinkSync('../../outside', join(docs, 'dir-out')); // a folder outside
    mkdirSync(join(docs, 'in'));
    symlinkSync('../../..', join(docs, 'in', 'hop')); // an ancestor of the root, which holds outside/
    symlinkSync(join(outside, 'rules'), join(docs, '.gitignore')); // an ignore file that is a link out

    const plan = await ws.runJson('plan', '--all');
    const sync = await ws.runJson('sync');
    const explain = await ws.run('explain', 'rel-out.md');
    const again = await ws.runJson('sync');

    // A git subdir of ".." is refused before anything is read.
    const escape = createWorkspace(join(root, 'ws-escape'), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main', subdir: '../' } }] },
    });
    const escaped = await escape.run('sync');

    // Search: the service's data folder, both state folders, and what the commands printed.
    const serviceFiles = filesUnder(suite.svc.dataDir);
    const stateFiles = [...filesUnder(join(root, 'ws', '.kbsync')), ...filesUnder(join(root, 'ws-escape', '.kbsync'))];
    // git's own clone holds the whole repository (other/ included): that copy is git's, not read by the sync.
    const stateOwnFiles = stateFiles.filter((p) => !p.includes(`${join('.kbsync', 'git')}/`));
    const outsideHashes = Object.values(outsideFiles).flatMap((content) => [sha256(content), Buffer.from(sha256(content).toString('hex'))]);
    const gitOutsideHash = sha256(`# Other\n${gitMarker}\n`);
    const hits: string[] = [];
    for (const path of [...serviceFiles, ...stateFiles]) {
      const bytes = readFileSync(path);
      if (bytes.includes(marker)) hits.push(`${path}: marker`);
      if (outsideHashes.some((h) => bytes.includes(h))) hits.push(`${path}: sha256 of an outside file`);
    }
    for (const path of [...serviceFiles, ...stateOwnFiles]) {
      const bytes = readFileSync(path);
      if (bytes.includes(gitMarker)) hits.push(`${path}: git marker`);
      if (bytes.includes(gitOutsideHash) || bytes.includes(gitOutsideHash.toString('hex')))
        hits.push(`${path}: sha256 of the file outside the subdir`);
    }
    const printed = [plan, sync, explain, again, escaped].map((r) => `${r.stdout}${r.stderr}`).join('\n');
    if (printed.includes(marker) || printed.includes(gitMarker)) hits.push('command output: marker');

    expect(serviceFiles.some((p) => p.endsWith('service.db'))).toBe(true);
    expect(hits).toEqual([]);

    // The sources worked: inside files (a.md too: the outside rules were not read), a followed inside link, the subdir.
    expect(sync.code).toBe(0);
    const uploaded = pathsWith(sync.report, 'upload');
    expect(uploaded).toEqual(['a.md', 'inside.md', 'ok-link.md']);
    expect(itemOf(sync.report, 'real.md').action).toBe('skip:duplicate-content');
    const linksOut = ['rel-out.md', 'abs-out.md', 'chain.md', 'inner/hop.md', 'dir-out', 'in/hop', 'up.md', 'abs.md', 'rel.md'];
    for (const link of linksOut) {
      expect(itemOf(sync.report, link), link).toMatchObject({
        action: 'skip:ignored',
        reason: expect.stringMatching(/points outside the source root: not followed$/),
      });
    }
    expect(again.report.summary).toMatchObject({ uploaded: 0, creditsSpent: 0 });

    expect(escaped.code).not.toBe(0);
    expect(escaped.stderr).toMatch(/subdir must be a folder inside the repository/);

    const bytes = [...serviceFiles, ...stateFiles].reduce((sum, p) => sum + readFileSync(p).length, 0);
    printFigures('nothing read outside a source root', {
      'ways out tried': `${linksOut.length} links, an ignore file, 3 globs, a git subdir`,
      'files inside synced': uploaded.length,
      'outside files': Object.keys(outsideFiles).length + 1,
      'files searched': `${serviceFiles.length + stateFiles.length} (${bytes} bytes: service data and state folders)`,
      'markers or outside hashes found': hits.length,
    });
  });
});
