import { describe, expect, it } from 'vitest';
import { FILE_FIELDS, fileSelect, fileValues, trackedOfRow, upsertSet, UPSERT_COLUMNS, type FileRow } from './fields.js';
import { TrackedIndex } from './tracked-index.js';
import { CORE_COLUMNS, DETAIL_COLUMNS } from './rows.js';
import { sha256Column } from './sha256-column.js';
import { mtimeColumn } from './mtime-column.js';

const sha = 'ab'.repeat(32);
const row: FileRow = {
  path: 'a.md',
  size: 3,
  mtime_ns: '1718000000123456789',
  inode: 9,
  sha256: sha,
  remote_name: '/',
  remote_id: 'r1',
  remote_status: 'failed',
  reprocess_attempts: 2,
  last_action: 'upload',
  last_reason: 'new file',
  updated_at: Date.UTC(2025, 0, 2),
  remote_error: 'unsupported_format',
  remote_chunks: 4,
};

describe('the tracked-file fields', () => {
  it('decode a row into a TrackedFile and encode it back into the upsert values', () => {
    const file = trackedOfRow(row, 'docs');

    expect(file).toEqual({
      source: 'docs',
      path: 'a.md',
      size: 3,
      mtimeNs: '1718000000123456789',
      inode: 9,
      sha256: sha,
      remoteName: 'docs/a.md',
      remoteId: 'r1',
      remoteStatus: 'failed',
      reprocessAttempts: 2,
      lastAction: 'upload',
      lastReason: 'new file',
      updatedAt: '2025-01-02T00:00:00.000Z',
      remoteError: 'unsupported_format',
      remoteChunks: 4,
    });
    const values = fileValues(file, 5, 42, (ns) => ns);
    expect(UPSERT_COLUMNS).toEqual(['source_id', ...FILE_FIELDS.filter((f) => f.kept === undefined).map((f) => f.column)]);
    expect(Object.fromEntries(UPSERT_COLUMNS.map((c, i) => [c, values[i]]))).toMatchObject({
      source_id: 5,
      mtime_ns: 1718000000123456789n,
      sha256: Buffer.from(sha, 'hex'),
      remote_name: '/',
      updated_at: 42,
    });
    // Kept columns: not written by the upsert, kept while the remote copy is the same.
    expect(UPSERT_COLUMNS).not.toContain('remote_chunks');
    expect(upsertSet((a, b) => `${a} IS ${b}`)).toContain(
      'remote_chunks = CASE WHEN excluded.remote_id IS files.remote_id THEN files.remote_chunks END',
    );
    expect(trackedOfRow({ ...row, remote_error: null, remote_chunks: null }, 'docs')).not.toHaveProperty('remoteChunks');
  });

  it('select each column in its row form, for each store', () => {
    expect(fileSelect('sqlite')).toContain('CAST(mtime_ns AS TEXT) AS mtime_ns');
    expect(fileSelect('pg')).toContain("encode(sha256, 'hex') AS sha256");
    for (const store of ['sqlite', 'pg'] as const)
      for (const f of FILE_FIELDS) expect(fileSelect(store)).toMatch(new RegExp(`(^|, |AS )${f.column}(,|$)`));
  });

  it('say truly which fields TrackedIndex holds (key, core and detail) and which it leaves to the row', () => {
    const index = new TrackedIndex();
    index.addColumns('docs', {
      paths: ['a.md'],
      sizes: [3],
      mtimeNs: mtimeColumn(['1']),
      inodes: [9],
      sha256: sha256Column([sha]),
      remoteNames: ['a.md'],
      remoteIds: ['r1'],
      remoteStatuses: ['processed'],
      deleted: [0],
      details: { reprocessAttempts: [0], lastActions: ['upload'], lastReasons: [null], updatedAt: [0], remoteChunks: [4] },
    });
    const made = index.find('docs', 'a.md') as object;

    for (const f of FILE_FIELDS) expect([f.prop, f.prop in made]).toEqual([f.prop, f.kind !== 'row']);
  });

  it('give TrackedIndex its detail columns, and hold as many core fields as the hand-joined bulk load reads', () => {
    expect(DETAIL_COLUMNS).toEqual(FILE_FIELDS.filter((f) => f.kind === 'detail').map((f) => f.index));
    // The path (the key), the core fields and the deleted mark (of last_action): a core field added
    // here fails until the bulk load reads it.
    expect(FILE_FIELDS.filter((f) => f.kind === 'key' || f.kind === 'core')).toHaveLength(CORE_COLUMNS.length - 1);
    expect(CORE_COLUMNS).toContain('deleted');
  });
});
