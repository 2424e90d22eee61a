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
