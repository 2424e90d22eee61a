import { mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanFolder, type FolderSourceSpec, type ScanResult } from '../../../src/sync/sources/folder.js';
import { testdir, writeTree } from './helpers.js';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';

function scan(root: string, o: Partial<FolderSourceSpec> = {}): ScanResult {
  return scanFolder({ name: 'docs', root, include: ['**/*'], exclude: [], followSymlinks: false, ...o });
}
const paths = (r: ScanResult): string[] => r.files.map((f) => f.path).sort();
const skippedAs = (r: ScanResult): Record<string, string> =>
  Object.fromEntries(r.skipped.map((s) => [s.path, s.reason]).sort(([a], [b]) => (a ?? '').localeCompare(b ?? '')));
const detailOf = (r: ScanResult, path: string): string | undefined => r.skipped.find((s) => s.path === path)?.detail;

describe('scanFolder', () => {
  it('lists supported files with POSIX root-relative paths and their stat fingerprint', () => {
    const root = testdir({ 'a.md': '# a', 'sub/deep/b.txt': 'bb', 'sub/c.json': '{}' });

    const result = scan(root);

    expect(paths(result)).toEqual(['a.md', 'sub/c.json', 'sub/deep/b.txt']);
    const b = result.files.find((f) => f.path === 'sub/deep/b.txt');
    const st = statSync(join(root, 'sub/deep/b.txt'));
    expect(b).toEqual({
      source: 'docs',
      path: 'sub/deep/b.txt',
      absPath: join(root, 'sub/deep/b.txt'),
      size: 2,
      mtimeNs: mtimeNsOf(st),
      inode: st.ino,
      sha256: null,
    });
    expect(result.skipped).toEqual([]);
  });

  it('skips a path with a line break or a tab as unsupported, saying to rename it (no name on the service can hold one)', () => {
    const root = testdir({ 'line\nbreak.md': 'x', 'tab\there/a.md': 'y', 'plain name é.md': 'z' });

    const result = scan(root);

    expect(paths(result)).toEqual(['plain name é.md']);
    expect(skippedAs(result)).toEqual({ 'line\nbreak.md': 'unsupported', 'tab\there/a.md': 'unsupported' });
    expect(detailOf(result, 'line\nbreak.md')).toMatch(/control character .*: rename it$/);
  });

  it('lists names that are not UTF-8 as bad-name with their bytes, each of them, and walks a valid name holding U+FFFD', () => {
    const root = testdir({ 'ok.md': '# ok', 'real \uFFFD.md': 'a valid name with the character itself' });
    // Two names that Node reads alike (caf\uFFFD.md), a .png of such a name, and one in an ignored folder.
    for (const byte of [0xe9, 0xe8])
      writeFileSync(Buffer.concat([Buffer.from(`${root}/caf`), Buffer.from([byte]), Buffer.from('.md')]), 'x');
    writeFileSync(Buffer.concat([Buffer.from(`${root}/pic`), Buffer.from([0xff]), Buffer.from('.png')]), 'x');
    mkdirSync(join(root, 'node_modules'));
    writeFileSync(Buffer.concat([Buffer.from(`${root}/node_modules/x`), Buffer.from([0xff]), Buffer.from('.md')]), 'x');

    const result = scan(root);

    expect(paths(result)).toEqual(['ok.md', 'real \uFFFD.md']);
    expect(skippedAs(result)).toEqual({
      'caf\\xE8.md': 'bad-name',
      'caf\\xE9.md': 'bad-name',
      node_modules: 'ignored',
      'pic\\xFF.png': 'unsupported',
    });
    expect(detailOf(result, 'caf\\xE9.md')).toMatch(/^its name is not valid UTF-8.*mv \$'caf\\xE9\.md' NEW-NAME/);
  });

  it('emits files in plain string order of their paths (a folder sorts as "name/")', () => {
    const root = testdir({ 'a/b.md': '', 'a.md': '', 'a-b.md': '', 'A.md': '', 'a0/x.md': '', 'ab.md': '', 'a/c/d.md': '', 'a/c.md': '' });

    const inWalkOrder = scan(root).files.map((f) => f.path);

    expect(inWalkOrder).toEqual([...inWalkOrder].sort());
    expect(inWalkOrder).toHaveLength(8);
  });

  it('matches extensions case-insensitively and lists unsupported files without reading them (no stat: size unknown)', () => {
    const root = testdir({ 'README.MD': 'x', 'Data.CSV': 'a,b', 'logo.png': 'PNG!!', Makefile: 'all:' });

    const result = scan(root);

    expect(paths(result)).toEqual(['Data.CSV', 'README.MD']);
    expect(result.skipped).toEqual(
      expect.arrayContaining([
        { source: 'docs', path: 'logo.png', reason: 'unsupported', detail: '.png files are not a supported type', size: null },
        { source: 'docs', path: 'Makefile', reason: 'unsupported', detail: 'no file extension: not a supported type', size: null },
      ]),
    );
  });

  it('applies include and exclude globs with fast-glob semantics', () => {
    const root = testdir({ 'a.md': '', 'guide/b.md': '', 'guide/c.txt': '', 'guide/drafts/d.md': '', 'other/e.md': '' });

    const result = scan(root, { include: ['*.md', 'guide/**'], exclude: ['**/*.txt', 'guide/drafts/**'] });

    expect(paths(result)).toEqual(['a.md', 'guide/b.md']);
    expect(skippedAs(result)).toEqual({ 'guide/c.txt': 'ignored', 'guide/drafts': 'ignored' });
    expect(detailOf(result, 'guide/drafts')).toBe('matches exclude: guide/drafts/**');
    expect(detailOf(result, 'guide/c.txt')).toBe('matches exclude: **/*.txt');
  });

  it('includes dot files and dot folders by default', () => {
    const root = testdir({ '.github/CONTRIBUTING.md': '', '.notes.md': '' });

    expect(paths(scan(root))).toEqual(['.github/CONTRIBUTING.md', '.notes.md']);
  });

  it('lists .git and node_modules once each, never their contents', () => {
    const root = testdir({
      '.git/HEAD': 'ref',
      '.git/info/x.md': '',
      'node_modules/pkg/README.md': '',
      'sub/node_modules/y.md': '',
      'keep.md': '',
    });

    const result = scan(root);

    expect(paths(result)).toEqual(['keep.md']);
    expect(result.skipped.map((s) => [s.path, s.reason, s.size])).toEqual(
      expect.arrayContaining([
        ['.git', 'ignored', null],
        ['node_modules', 'ignored', null],
        ['sub/node_modules', 'ignored', null],
      ]),
    );
    expect(result.skipped).toHaveLength(3);
    expect(detailOf(result, '.git')).toBe('git metadata: never synced');
  });

  it('honours .gitignore and .kbsyncignore in every folder, relative to it, with negation', () => {
    const root = testdir({
      '.gitignore': '*.log.md\nbuild/\n/top-only.md\n',
      '.kbsyncignore': 'private/\n',
      'a.md': '',
      'x.log.md': '',
      'keep.log.md': '',
      'top-only.md': '',
      'build/out.md': '',
      'private/p.md': '',
      'sub/.gitignore': '!keep.log.md\ndraft-*.md\n',
      'sub/keep.log.md': '',
      'sub/top-only.md': '',
      'sub/draft-1.md': '',
      'sub/deeper/draft-2.md': '',
      'sub/deeper/.kbsyncignore': '!draft-2.md\n',
      'other/draft-3.md': '',
    });

    const result = scan(root);

    expect(paths(result)).toEqual(['a.md', 'other/draft-3.md', 'sub/deeper/draft-2.md', 'sub/keep.log.md', 'sub/top-only.md']);
    expect(skippedAs(result)).toMatchObject({
      'x.log.md': 'ignored',
      'keep.log.md': 'ignored',
      'top-only.md': 'ignored',
      build: 'ignored',
      private: 'ignored',
      'sub/draft-1.md': 'ignored',
    });
    expect(detailOf(result, 'build')).toBe('matches .gitignore: build/');
    expect(detailOf(result, 'private')).toBe('matches .kbsyncignore: private/');
    expect(detailOf(result, 'sub/draft-1.md')).toBe('matches sub/.gitignore: draft-*.md');
  });

  it('cannot re-include a file inside an ignored folder (as git)', () => {
    const root = testdir({ '.gitignore': 'out/\n', 'out/.gitignore': '!a.md\n', 'out/a.md': '' });

    const result = scan(root);

    expect(paths(result)).toEqual([]);
    expect(skippedAs(result)).toMatchObject({ out: 'ignored' });
  });

  it.each([
    '.env',
    '.env.local',
    'prod.env',
    'server.pem',
    'tls.key',
    'cert.p12',
    'cert.pfx',
    'store.jks',
    'release.keystore',
    'putty.ppk',
    'private.asc',
    'id_rsa',
    'id_rsa.pub',
    'id_dsa',
    'id_ecdsa',
    'id_ed25519',
    '.npmrc',
    '.pypirc',
    '.netrc',
    '_netrc',
    '.git-credentials',
    '.pgpass',
    '.htpasswd',
    '.dockercfg',
    'credentials',
    'credentials.json',
    'Credentials-prod.json',
    'client_secret_123.json',
    'service-account-ci.json',
    'vault.kdbx',
    'secrets.yaml',
    'SECRETS.json',
    'secret.txt',
  ])('skips %s as a secret, whatever its extension', (name) => {
    const root = testdir({ [`conf/${name}`]: 'TOKEN=abc', 'conf/ok.md': '' });

    const result = scan(root);

    expect(paths(result)).toEqual(['conf/ok.md']);
    expect(result.skipped).toEqual([
      { source: 'docs', path: `conf/${name}`, reason: 'secret', detail: expect.stringMatching(/^named like .+; never read$/), size: null },
    ]);
  });

  it('does not take harmless names for secrets', () => {
    const root = testdir({ 'environment.md': '', 'keys.md': '', 'monkey.txt': '', 'secret-sauce.md': '', 'credentials-guide.md': '' });

    expect(paths(scan(root))).toEqual(['credentials-guide.md', 'environment.md', 'keys.md', 'monkey.txt', 'secret-sauce.md']);
  });

  it('throws source_unavailable when the root is missing or a file', () => {
    const root = testdir({ 'f.md': '' });

    expect(() => scan(join(root, 'nope'))).toThrow(expect.objectContaining({ code: 'source_unavailable' }));
    expect(() => scan(join(root, 'f.md'))).toThrow(expect.objectContaining({ code: 'source_unavailable' }));
  });
});

describe('scanFolder and symbolic links', () => {
  it('does not follow symlinks by default', () => {
    const root = testdir({ 'real/a.md': 'a', 'link.md': { symlink: 'real/a.md' }, dirlink: { symlink: 'real' } });

    const result = scan(root);

    expect(paths(result)).toEqual(['real/a.md']);
    expect(skippedAs(result)).toEqual({ 'link.md': 'symlink', dirlink: 'symlink' });
  });

  it('follows links that stay inside the root when asked, reading the real file', () => {
    const root = testdir({ 'real/a.md': 'a', 'link.md': { symlink: 'real/a.md' }, dirlink: { symlink: 'real' } });

    const result = scan(root, { followSymlinks: true });

    expect(paths(result)).toEqual(['dirlink/a.md', 'link.md', 'real/a.md']);
    expect(result.files.find((f) => f.path === 'link.md')?.absPath).toBe(join(root, 'real/a.md'));
    expect(result.skipped).toEqual([]);
  });

  it('never follows a link out of the root: not to /etc, not to the parent, not through a chain', () => {
    const outside = testdir({ 'secret-notes.md': 'outside' });
    const root = testdir({ 'in/a.md': '' });
    writeTree(root, {
      etc: { symlink: '/etc' },
      'hosts.txt': { symlink: '/etc/hosts' },
      up: { symlink: '..' },
      'notes.md': { symlink: join(outside, 'secret-notes.md') },
      'in/hop': { symlink: '../../' },
    });

    const result = scan(root, { followSymlinks: true });

    expect(paths(result)).toEqual(['in/a.md']);
    expect(skippedAs(result)).toEqual({
      etc: 'symlink',
      'hosts.txt': 'symlink',
      up: 'symlink',
      'notes.md': 'symlink',
      'in/hop': 'symlink',
    });
    expect(detailOf(result, 'etc')).toBe('symbolic link points outside the source root: not followed');
  });

  it('stops at cycles: a link to an ancestor, and two links pointing at each other', () => {
    const root = testdir({ 'a/x.md': '', 'b/y.md': '' });
    writeTree(root, { 'a/self': { symlink: '.' }, 'a/toB': { symlink: '../b' }, 'b/toA': { symlink: '../a' } });

    const result = scan(root, { followSymlinks: true });

    expect(paths(result)).toEqual(['a/toB/y.md', 'a/x.md', 'b/toA/x.md', 'b/y.md']);
    expect(skippedAs(result)).toEqual({ 'a/self': 'symlink', 'a/toB/toA': 'symlink', 'b/toA/self': 'symlink', 'b/toA/toB': 'symlink' });
    expect(detailOf(result, 'a/self')).toBe('symbolic link loops back to a folder being walked: not followed');
  });

  it('follows a folder link that the include globs reach only through its contents', () => {
    const root = testdir({ 'real/a.md': 'a', 'real/b.txt': 'b', docs: { symlink: 'real' } });

    expect(paths(scan(root, { include: ['docs/**/*.md'], followSymlinks: true }))).toEqual(['docs/a.md']);
    expect(skippedAs(scan(root, { include: ['docs/**/*.md'] }))).toEqual({ docs: 'symlink' });
  });

  it('holds a followed link to the rules of its target: no .git, node_modules, secret, ignored or excluded file comes in under a new name', () => {
    const root = testdir({
      '.git/config': '[remote "origin"]\n\turl = https://user:token@example.com/r.git\n',
      'node_modules/pkg/README.md': '# pkg',
      '.env': 'API_KEY=abc',
      'private/plan.md': '# private',
      'drafts/d.md': '# draft',
      '.gitignore': 'private/\n',
      'ok.md': '# ok',
      'leak.md': { symlink: '.git/config' },
      gitdir: { symlink: '.git' },
      'pkg.md': { symlink: 'node_modules/pkg/README.md' },
      'env.md': { symlink: '.env' },
      'plan.md': { symlink: 'private/plan.md' },
      privdir: { symlink: 'private' },
      'draft.md': { symlink: 'drafts/d.md' },
      'fine.md': { symlink: 'ok.md' },
    });

    const result = scan(root, { exclude: ['drafts/**'], followSymlinks: true });

    expect(paths(result)).toEqual(['fine.md', 'ok.md']);
    expect(result.files.find((f) => f.path === 'fine.md')?.absPath).toBe(join(root, 'ok.md'));
    expect(skippedAs(result)).toMatchObject({
      'leak.md': 'ignored',
      gitdir: 'ignored',
      'pkg.md': 'ignored',
      'env.md': 'secret',
      'plan.md': 'ignored',
      privdir: 'ignored',
      'draft.md': 'ignored',
    });
    expect(detailOf(result, 'leak.md')).toBe('symbolic link to .git/config: inside .git/ (git metadata: never synced); not followed');
    expect(detailOf(result, 'env.md')).toBe('symbolic link to .env: named like .env; never read');
    expect(detailOf(result, 'plan.md')).toBe(
      'symbolic link to private/plan.md: folder private/ matches .gitignore: private/; not followed',
    );
    expect(detailOf(result, 'draft.md')).toBe('symbolic link to drafts/d.md: folder drafts/ matches exclude: drafts/**; not followed');
  });

  it('holds the files below a followed folder link to the rules of their real paths', () => {
    const root = testdir({
      'private/.gitignore': 'internal.md\n',
      'private/sub/internal.md': '# internal',
      'private/sub/excluded.md': '# excluded',
      'private/sub/ok.md': '# ok',
      'private/sub/deeper/.env.local': 'KEY=1',
      'private/sub/drafts/d.md': '# d',
      'docs/link': { symlink: '../private/sub' },
    });

    const result = scan(root, { exclude: ['private/sub/excluded.md', 'private/sub/drafts'], followSymlinks: true });

    expect(paths(result).filter((p) => p.startsWith('docs/'))).toEqual(['docs/link/ok.md']);
    expect(skippedAs(result)).toMatchObject({
      'docs/link/internal.md': 'ignored',
      'docs/link/excluded.md': 'ignored',
      'docs/link/deeper/.env.local': 'secret',
      'docs/link/drafts': 'ignored',
    });
    expect(detailOf(result, 'docs/link/internal.md')).toBe(
      'reached through a symbolic link as private/sub/internal.md: the target matches private/.gitignore: internal.md; not synced',
    );
    expect(detailOf(result, 'docs/link/drafts')).toBe(
      'reached through a symbolic link as private/sub/drafts: folder private/sub/drafts/ matches exclude: private/sub/drafts; not synced',
    );
  });

  it("reads a target's rules right when the source root is / itself", () => {
    const root = testdir({
      '.gitignore': 'private/\n',
      'private/p.md': '# p',
      'ok.md': '# ok',
      'l.md': { symlink: 'private/p.md' },
      'm.md': { symlink: 'ok.md' },
    });
    const under = relative('/', realpathSync(root));

    const result = scan('/', { include: [`${under}/**`], followSymlinks: true });

    expect(paths(result)).toEqual([`${under}/m.md`, `${under}/ok.md`]);
    expect(detailOf(result, `${under}/l.md`)).toBe(
      `symbolic link to ${under}/private/p.md: folder ${under}/private/ matches ${under}/.gitignore: private/; not followed`,
    );
  });

  it("applies a nested ignore file of the target's own folders", () => {
    const root = testdir({
      'team/.kbsyncignore': 'notes.md\n',
      'team/notes.md': '# n',
      'team/other.md': '# o',
      'n.md': { symlink: 'team/notes.md' },
      'o.md': { symlink: 'team/other.md' },
    });

    const result = scan(root, { followSymlinks: true });

    expect(paths(result)).toEqual(['o.md', 'team/other.md']);
    expect(detailOf(result, 'n.md')).toBe('symbolic link to team/notes.md: the target matches team/.kbsyncignore: notes.md; not followed');
  });

  it('reports a broken link as a skipped symlink', () => {
    const root = testdir({ 'gone.md': { symlink: 'nowhere.md' } });

    const result = scan(root, { followSymlinks: true });

    expect(result.skipped).toEqual([
      { source: 'docs', path: 'gone.md', reason: 'symlink', detail: expect.stringContaining('broken symbolic link'), size: null },
    ]);
  });

  it('never reads an ignore file that is a link out of the root', () => {
    const outside = testdir({ rules: 'a.md\n' });
    const root = testdir({ 'a.md': '', '.gitignore': { symlink: join(outside, 'rules') } });

    expect(paths(scan(root))).toEqual(['a.md']);
  });
});
