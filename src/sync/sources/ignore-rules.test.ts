import { describe, expect, it } from 'vitest';
import { createPathIgnoreChecker, matchIgnoreRules, parseIgnoreLevel, type IgnoreLevel } from './ignore-rules.js';

describe('matchIgnoreRules', () => {
  it('lets the last matching rule win across levels, deeper levels last', () => {
    const levels = [parseIgnoreLevel('', '.gitignore', '*.md\n'), parseIgnoreLevel('a', '.kbsyncignore', '!keep.md\n')];

    expect(matchIgnoreRules(levels, 'a/keep.md', false)).toBeNull();
    expect(matchIgnoreRules(levels, 'a/other.md', false)).toBe('matches .gitignore: *.md');
    expect(matchIgnoreRules(levels.slice(0, 1), 'b/keep.md', false)).toBe('matches .gitignore: *.md');
  });

  it('applies folder-only rules to folders only, and is case-sensitive', () => {
    const levels = [parseIgnoreLevel('', '.gitignore', 'build/\n')];

    expect(matchIgnoreRules(levels, 'build', true)).toBe('matches .gitignore: build/');
    expect(matchIgnoreRules(levels, 'build', false)).toBeNull();
    expect(matchIgnoreRules(levels, 'Build', true)).toBeNull();
  });

  it('anchors a rule with a slash to its own folder', () => {
    const levels = [parseIgnoreLevel('sub', '.gitignore', '/only-here.md\n')];

    expect(matchIgnoreRules(levels, 'sub/only-here.md', false)).toBe('matches sub/.gitignore: /only-here.md');
    expect(matchIgnoreRules(levels, 'sub/deeper/only-here.md', false)).toBeNull();
  });
});

describe('createPathIgnoreChecker', () => {
  const levels = new Map<string, IgnoreLevel[]>([
    ['', [parseIgnoreLevel('', '.kbsyncignore', 'drafts/\n*.tmp.md\n')]],
    ['docs', [parseIgnoreLevel('docs', '.kbsyncignore', '!keep.tmp.md\n')]],
    ['drafts', [parseIgnoreLevel('drafts', '.kbsyncignore', '!*\n')]],
  ]);
  const check = createPathIgnoreChecker(levels);

  it.each([
    ['a.md', null],
    ['x.tmp.md', 'matches .kbsyncignore: *.tmp.md'],
    ['docs/keep.tmp.md', null],
    ['docs/deep/keep.tmp.md', null],
    ['docs/other.tmp.md', 'matches .kbsyncignore: *.tmp.md'],
    ['drafts/a.md', 'matches .kbsyncignore: drafts/'],
    ['drafts/deep/a.md', 'matches .kbsyncignore: drafts/'],
  ])('%s → %s', (path, expected) => {
    expect(check(path)).toBe(expected);
  });

  it('ignores nothing without ignore files', () => {
    expect(createPathIgnoreChecker(new Map())('anything.md')).toBeNull();
  });
});

describe('the base-name pre-filter', () => {
  const patterns = [
    '*.log',
    'build/',
    '/top.md',
    'docs/*.md',
    '**/tmp',
    'a?c.md',
    'x[0-9].md',
    '\\!bang.md',
    '\\#hash.md',
    'trail.md   ',
    'esc\\ .md',
    'foo/**',
    'deep/**/z.md',
    '!keep.log',
    '*',
    'lone\\',
    '\uFEFFbom.md',
    'name',
    'a/b/',
    '[]x].md',
    'CASE.md',
  ];
  const paths = [
    'a.log',
    'dir/a.log',
    'keep.log',
    'build',
    'build/x.md',
    'top.md',
    'sub/top.md',
    'docs/a.md',
    'docs/sub/a.md',
    'tmp',
    'x/tmp',
    'abc.md',
    'a/c.md',
    'x5.md',
    'xa.md',
    '!bang.md',
    '#hash.md',
    'trail.md',
    'esc .md',
    'foo/bar.md',
    'deep/1/2/z.md',
    'lone',
    'bom.md',
    'name',
    'q/name',
    'a/b',
    ']x].md',
    'x.md',
    'case.md',
    'CASE.md',
  ];

  it.each(patterns)('never hides a match of %j', (pattern) => {
    const level = parseIgnoreLevel('', '.gitignore', `${pattern}\n`);
    const unfiltered = { ...level, fileFilter: /(?:)/ }; // a filter that always says "maybe"

    // As the walk does: only files whose parent folders are not ignored are asked about.
    const parents = (path: string): string[] =>
      path
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/'));
    for (const path of paths.filter((p) => parents(p).every((dir) => matchIgnoreRules([level], dir, true) === null))) {
      expect([path, matchIgnoreRules([level], path, false)]).toEqual([path, matchIgnoreRules([unfiltered], path, false)]);
    }
  });

  it('lets a file no rule can match skip the ignore package', () => {
    expect(parseIgnoreLevel('', '.gitignore', 'build/\n*.log\n!x.md\n# c\n').fileFilter?.source).toBe('(?:\\.log)$');
    expect(parseIgnoreLevel('', '.gitignore', 'a?c.md\n*.log\n*\n').fileFilter?.source).toBe('^(?:a.c\\.md)$|(?:\\.log|)$');
    expect(parseIgnoreLevel('', '.gitignore', 'build/\n!x.md\n').fileFilter).toBeNull();
  });
});
