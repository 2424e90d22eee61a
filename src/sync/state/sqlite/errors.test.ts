import { describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../shared/errors.js';
import { classifyStateError, guardCorruption } from './errors.js';

const withCode = (code: string, message = `${code}: something`): Error => Object.assign(new Error(message), { code });
const codeOf = (err: unknown): string | null => (isKbsyncError(err) ? err.code : null);

describe('classifyStateError', () => {
  it.each([
    ['EISDIR', 'it is a folder, not a file'],
    ['ENOTDIR', 'a part of it is a file, not a folder'],
    ['EACCES', 'permission denied'],
    ['SQLITE_CANTOPEN_ISDIR', 'SQLite cannot open it'],
    ['SQLITE_READONLY_DBMOVED', 'SQLite may not write it'],
  ])('while opening, %s is state_unavailable naming the setting and the path', (code, problem) => {
    const err = classifyStateError(withCode(code), '.kbsync/state.db', { opening: true });

    expect(codeOf(err)).toBe('state_unavailable');
    expect((err as Error).message).toBe(`state: cannot use .kbsync/state.db as the state database: ${problem} (${code}: something)`);
  });

  it.each(['ENOSPC', 'EROFS', 'SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_READONLY_DIRECTORY'])(
    'during a run, %s is state_write_failed',
    (code) => {
      const err = classifyStateError(withCode(code), '.kbsync/state.db');

      expect(codeOf(err)).toBe('state_write_failed');
      expect((err as Error).message).toMatch(/^the state database \.kbsync\/state\.db could not be written: /);
      expect((err as Error).cause).toBeInstanceOf(Error);
    },
  );

  it('leaves a setting problem met during a run, and anything else, as it was; corruption is state_corrupt either way', () => {
    const eacces = withCode('EACCES');
    const bug = new TypeError('x is undefined');

    expect(classifyStateError(eacces, 's.db')).toBe(eacces);
    expect(classifyStateError(bug, 's.db', { opening: true })).toBe(bug);
    expect(codeOf(classifyStateError(withCode('SQLITE_CORRUPT_INDEX'), 's.db'))).toBe('state_corrupt');
    expect(codeOf(classifyStateError(withCode('SQLITE_NOTADB'), 's.db', { opening: true }))).toBe('state_corrupt');
  });
});

describe('guardCorruption', () => {
  it('classifies what every method of the store throws, and passes results and other values through', () => {
    const store = guardCorruption(
      {
        label: 'kept',
        write: (): never => {
          throw withCode('SQLITE_FULL');
        },
        read: (n: number) => n + 1,
      },
      's.db',
    );

    expect(store.label).toBe('kept');
    expect(store.read(1)).toBe(2);
    expect(() => store.write()).toThrow(expect.objectContaining({ code: 'state_write_failed' }));
  });
});
