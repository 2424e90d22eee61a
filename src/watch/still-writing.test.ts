import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ObservedFile } from '../sync/types.js';
import type { Writer, WrittenFile } from './open-writers.js';
import { createStillWriting, GROWING_QUIET_MS, WRITER_POLL_MAX_MS, WRITER_POLL_MS, WRITER_QUIET_MS } from './still-writing.js';

const T0 = 1_700_000_000_000;

function file(path: string, o: { size?: number; mtimeMs?: number; inode?: number } = {}): ObservedFile {
  return {
    source: 'docs',
    path,
    absPath: `/root/docs/${path}`,
    size: o.size ?? 100,
    mtimeNs: String((o.mtimeMs ?? Date.now()) * 1e6),
    inode: o.inode ?? 7,
    sha256: 'a'.repeat(64),
  };
}

describe('createStillWriting', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => vi.useRealTimers());

  /** A daemon's holder whose writers are `open` (null: the platform cannot tell), its files this user's. */
  function make(open: () => Map<string, Writer> | null, o: { owner?: number } = {}) {
    const wake = vi.fn();
    const asked: WrittenFile[][] = [];
    const writing = createStillWriting({
      nowMs: Date.now,
      wake,
      writers: (files) => (asked.push([...files]), open()),
      ownerOf: () => o.owner ?? 1000,
      uid: 1000,
    });
    return { writing, wake, asked };
  }

  it('holds a file a process holds open for writing, says which, and wakes the daemon once it is closed', () => {
    let open = new Map<string, Writer>([['docs\0big.txt', { pid: 42, command: 'cp' }]]);
    const { writing, wake, asked } = make(() => open);

    const held = writing.holdBack([file('big.txt'), file('other.md', { inode: 8 })]);

    expect([...held]).toEqual([
      ['docs\0big.txt', 'still being written: cp (pid 42) holds it open for writing; sent once it is closed (or not written for 60 s)'],
    ]);
    // Looked at again 2 s later, then 4 and 8 s after that while the writer stays (at most every 16 s).
    vi.advanceTimersByTime(WRITER_POLL_MS * (1 + 2 + 4));
    expect(asked).toHaveLength(1 + 3);
    expect(wake).not.toHaveBeenCalled();
    open = new Map();
    vi.advanceTimersByTime(WRITER_POLL_MAX_MS);
    expect(asked).toHaveLength(1 + 4);
    expect(wake).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(WRITER_QUIET_MS);
    expect(wake).toHaveBeenCalledTimes(1);
    writing.close();
  });

  it('lets a file go that a writer keeps open but has not written for a minute (a log its process keeps open)', () => {
    const open = new Map<string, Writer>([['docs\0app.txt', { pid: 9, command: 'app' }]]);
    const { writing, wake, asked } = make(() => open);

    expect(writing.holdBack([file('app.txt', { mtimeMs: T0 - WRITER_QUIET_MS })]).size).toBe(0);
    expect(asked).toEqual([]);
    // Written just now: held, then let go a minute after that write although it is still open.
    expect(writing.holdBack([file('app.txt', { mtimeMs: T0 })]).size).toBe(1);
    vi.advanceTimersByTime(WRITER_QUIET_MS - 1);
    expect(wake).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(wake).toHaveBeenCalledTimes(1);
    writing.close();
  });

  it("does not hold an editor's save: written, closed, then looked at (no writer), even larger than before", () => {
    const { writing, wake } = make(() => new Map());
    writing.seen('/root/docs/notes.md', { size: 100, ino: 7 });

    expect(writing.holdBack([file('notes.md', { size: 4000 })]).size).toBe(0);
    vi.advanceTimersByTime(WRITER_QUIET_MS);
    expect(wake).not.toHaveBeenCalled();
  });

  describe('where the writers cannot be seen (another platform, or a file of another user)', () => {
    it.each([
      ['no process table', (): Map<string, Writer> | null => null, undefined],
      ['a file of another user', (): Map<string, Writer> | null => new Map<string, Writer>(), 0],
    ] as const)('%s: a file seen growing waits until it has been unchanged for 10 s', (_, open, owner) => {
      const { writing, wake } = make(open, owner === undefined ? {} : { owner });
      writing.seen('/root/docs/big.txt', { size: 0, ino: 7 }); // made, empty
      writing.seen('/root/docs/big.txt', { size: 6 << 20, ino: 7 }); // its first half

      const held = writing.holdBack([file('big.txt', { size: 6 << 20, mtimeMs: T0 - 2000 })]);

      expect([...held.values()]).toEqual([
        'still being written: seen growing, last written 2 s ago; sent once it has been unchanged for 10 s',
      ]);
      vi.advanceTimersByTime(GROWING_QUIET_MS - 2000 - 1);
      expect(wake).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1);
      expect(wake).toHaveBeenCalledTimes(1);
      // Looked at again once settled: it goes.
      expect(writing.holdBack([file('big.txt', { size: 6 << 20, mtimeMs: T0 - 2000 })]).size).toBe(0);
      writing.close();
    });

    it('an in-place save (the old size, truncated, the new one) and a file first seen whole are not growing', () => {
      const { writing } = make(() => null);
      writing.seen('/root/docs/notes.md', { size: 300, ino: 7 });
      writing.seen('/root/docs/notes.md', { size: 0, ino: 7 });
      writing.seen('/root/docs/notes.md', { size: 900, ino: 7 });
      // An atomic save: a new inode, whole at once.
      writing.seen('/root/docs/saved.md', { size: 300, ino: 8 });
      writing.seen('/root/docs/saved.md', { size: 500, ino: 9 });

      expect(writing.holdBack([file('notes.md', { size: 900 }), file('saved.md', { size: 500, inode: 9 })]).size).toBe(0);
      writing.close();
    });

    it('a file that grows between two cycles is growing (the first look was a cycle of its half)', () => {
      const { writing } = make(() => null);
      expect(writing.holdBack([file('big.txt', { size: 6 << 20 })]).size).toBe(0);
      expect(writing.holdBack([file('big.txt', { size: 12 << 20 })]).size).toBe(1);
      writing.close();
    });
  });
});
