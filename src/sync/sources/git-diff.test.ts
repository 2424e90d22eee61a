import { describe, expect, it } from 'vitest';
import { parseNameStatus } from './git-diff.js';

const z = (...fields: string[]): string => `${fields.join('\0')}\0`;

describe('parseNameStatus', () => {
  it('sorts each status into added, modified, deleted and renamed', () => {
    const output = z(
      'A',
      'new.md',
      'M',
      'edited.md',
      'D',
      'gone.md',
      'R100',
      'old name.md',
      'new name.md',
      'T',
      'typechange.md',
      'C100',
      'a.md',
      'copy.md',
    );

    expect(parseNameStatus(output, '')).toEqual({
      added: ['new.md', 'copy.md'],
      modified: ['edited.md', 'typechange.md'],
      deleted: ['gone.md'],
      renamed: [{ from: 'old name.md', to: 'new name.md' }],
    });
  });

  it('makes paths relative to the subdir and drops the rest; renames across its edge become adds and deletes', () => {
    const output = z(
      'M',
      'docs/a.md',
      'M',
      'src/x.md',
      'R100',
      'docs/in.md',
      'docs/sub/in.md',
      'R100',
      'docs/out.md',
      'src/out.md',
      'R100',
      'src/in.md',
      'docs/in2.md',
      'A',
      'docsy/z.md',
    );

    expect(parseNameStatus(output, 'docs')).toEqual({
      added: ['in2.md'],
      modified: ['a.md'],
      deleted: ['out.md'],
      renamed: [{ from: 'in.md', to: 'sub/in.md' }],
    });
  });

  it('reads nothing from empty output', () => {
    expect(parseNameStatus('', '')).toEqual({ added: [], modified: [], deleted: [], renamed: [] });
  });
});
