import { describe, expect, it } from 'vitest';
import { FileList, RemoteFile } from './schemas.js';

describe('RemoteFile', () => {
  it('makes each absent or null optional field null, and a numeric id a string', () => {
    expect(RemoteFile.parse({ id: 7, name: 'a.md', status: 'queued', size: null })).toEqual({
      id: '7',
      name: 'a.md',
      size: null,
      sha256: null,
      status: 'queued',
      chunkCount: null,
      error: null,
      createdAt: null,
      updatedAt: null,
    });
  });

  it('keeps the fields sent, in the client shape, and ignores the ones it does not read', () => {
    const wire = { id: 'f-1', name: 'b.md', size: 3, sha256: 'ab', status: 'failed', chunk_count: 0, error: 'parse_failed' };
    expect(RemoteFile.parse({ ...wire, created_at: 'c', updated_at: 'u', knowledge_source_id: 9 })).toEqual({
      id: 'f-1',
      name: 'b.md',
      size: 3,
      sha256: 'ab',
      status: 'failed',
      chunkCount: 0,
      error: 'parse_failed',
      createdAt: 'c',
      updatedAt: 'u',
    });
  });

  it('refuses an empty or fractional id, a negative size and a missing status, naming the field', () => {
    for (const [bad, field] of [
      [{ id: '', name: 'a', status: 'queued' }, 'id'],
      [{ id: 1.5, name: 'a', status: 'queued' }, 'id'],
      [{ id: 1, name: 'a', status: 'queued', size: -1 }, 'size'],
      [{ id: 1, name: 'a' }, 'status'],
    ] as const) {
      const result = FileList.safeParse({ files: [bad], total: 1 });
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.path).toEqual(['files', 0, field]);
    }
  });
});
