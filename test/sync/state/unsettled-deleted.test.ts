import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openState, type StateStore } from '../../../src/sync/state/index.js';
import { freshDatabase } from '../../helpers/postgres.js';
import { fakeClock, tempState } from './fixtures/state-dir.js';

/** What the daemon reads of unsettled copies and deleted marks, on both StateStore implementations. */
const BACKENDS = [
  {
    name: 'sqlite',
    location: async () => {
      const t = tempState();
      return { where: t.path, cleanup: t.cleanup };
    },
  },
  { name: 'postgres', location: async () => ({ where: await freshDatabase('unsettled'), cleanup: () => {} }) },
];

const sha = (n: number): string => n.toString(16).padStart(2, '0').repeat(32);

describe.each(BACKENDS)('unsettled copies and deleted marks ($name)', (backend) => {
  let store: StateStore;
  let cleanup: () => void;
  beforeEach(async () => {
    const at = await backend.location();
    cleanup = at.cleanup;
    store = openState(at.where, { now: fakeClock('2025-03-14T12:00:00.000Z').now });
  });
  afterEach(() => {
    store.close();
    cleanup();
  });

  const row = (
    path: string,
    n: number,
    remoteId: string | null,
    remoteStatus: 'queued' | 'processing' | 'processed' | 'unknown' | null,
  ) => ({
    source: 'docs',
    path,
    size: n,
    mtimeNs: String(n),
    inode: n,
    sha256: sha(n),
    remoteName: path,
    remoteId,
    remoteStatus,
    reprocessAttempts: 0,
    lastAction: 'upload',
    lastReason: null,
  });

  it('unsettledCopies: the rows with a copy queued, processing or unknown; the index says which rows are marked deleted', () => {
    store.upsertTrackedMany([
      row('a.md', 1, 'r1', 'queued'),
      row('b.md', 2, 'r2', 'processing'),
      row('c.md', 3, 'r3', 'processed'),
      row('d.md', 4, 'r4', 'unknown'),
      row('e.md', 5, null, null),
    ]);
    store.markDeleted('docs', 'c.md');
    store.markDeleted('docs', 'b.md');

    const copies = store.unsettledCopies().sort((x, y) => x.path.localeCompare(y.path));
    const index = store.loadTrackedFiles();
    const stat = (n: number) => ({ size: n, mtimeNs: String(n), inode: n });

    expect(copies).toEqual([
      { source: 'docs', path: 'a.md', remoteId: 'r1', remoteStatus: 'queued' },
      { source: 'docs', path: 'b.md', remoteId: 'r2', remoteStatus: 'processing' },
      { source: 'docs', path: 'd.md', remoteId: 'r4', remoteStatus: 'unknown' },
    ]);
    expect(['a.md', 'b.md', 'c.md', 'd.md', 'e.md'].map((p) => index.deletedAt(index.rowOf('docs', p)))).toEqual([
      false,
      true,
      true,
      false,
      false,
    ]);
    // A processed copy whose row is marked deleted is never "unchanged": its file coming back is planned.
    expect(index.settledAt(index.rowOf('docs', 'c.md'), stat(3))).toBe(false);
    store.upsertTracked({ ...row('c.md', 3, 'r3', 'processed'), lastAction: 'skip:unchanged' });
    const again = store.loadTrackedFiles();
    expect(again.settledAt(again.rowOf('docs', 'c.md'), stat(3))).toBe(true);
  });
});
