import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../src/shared/errors.js';
import { openState, type OpenStateOptions, type StateStore, type TrackedFileInput } from '../../../src/sync/state/index.js';
import type { TrackedFile } from '../../../src/sync/types.js';
import { OP_KINDS } from '../../../src/sync/state/state-types.js';
import { freshDatabase } from '../../helpers/postgres.js';
import { fakeClock, tempState, uploadOp, type FakeClock } from './fixtures/state-dir.js';

/**
 * The single-process rules of the state, run against both StateStore implementations: the SQLite
 * file (the default) and the shared PostgreSQL state (a real server, test/helpers/postgres.ts).
 */
type Backend = { name: string; location: () => Promise<{ where: string; cleanup: () => void }> };
const BACKENDS: Backend[] = [
  {
    name: 'sqlite',
    location: async () => {
      const t = tempState();
      return { where: t.path, cleanup: t.cleanup };
    },
  },
  { name: 'postgres', location: async () => ({ where: await freshDatabase('contract'), cleanup: () => {} }) },
];

const BIG = 1_000_000;
const sha = (n: number): string => n.toString(16).padStart(2, '0').repeat(32);

/** docs/a.md as its first upload (copy r1 of content 1) records it, with the remote name and status given. */
const uploaded = (o: Pick<TrackedFileInput, 'remoteName' | 'remoteStatus'>): TrackedFileInput => ({
  source: 'docs',
  path: 'a.md',
  size: 10,
  mtimeNs: '1',
  inode: 7,
  sha256: sha(1),
  remoteId: 'r1',
  reprocessAttempts: 0,
  lastAction: 'upload',
  lastReason: 'new file',
  ...o,
});

describe.each(BACKENDS)('the state contract ($name)', (backend) => {
  let where: string;
  let cleanup: () => void;
  let opened: StateStore[];
  let clock: FakeClock;
  let store: StateStore;
  const open = (o: OpenStateOptions = {}): StateStore => {
    const s = openState(where, { now: clock.now, ...o });
    opened.push(s);
    return s;
  };
  beforeEach(async () => {
    ({ where, cleanup } = await backend.location());
    opened = [];
    clock = fakeClock('2025-03-14T12:00:00.000Z');
    store = open();
  });
  afterEach(() => {
    expect(store.verifyTotals()).toEqual([]);
    for (const s of opened) s.close();
    cleanup();
  });

  it('tracks files: upsert, read back, find by content, statuses, delete marks, removal', () => {
    const file = {
      source: 'docs',
      path: 'a.md',
      size: 10,
      mtimeNs: '1718000000123456789',
      inode: 7,
      sha256: sha(1),
      remoteName: 'docs/a.md',
      remoteId: 'r1',
      remoteStatus: 'queued' as const,
      reprocessAttempts: 0,
      lastAction: 'upload',
      lastReason: 'new file',
    };
    expect(store.isNew).toBe(true);
    store.upsertTracked(file);
    store.upsertTrackedMany([{ ...file, path: 'b.md', remoteName: 'b.md', sha256: sha(2), remoteId: 'r2' }]);
    expect(store.getTracked('docs', 'a.md')).toMatchObject({ ...file, updatedAt: '2025-03-14T12:00:00.000Z' });
    expect(store.trackedCount()).toBe(2);
    expect(store.findBySha256(sha(2)).map((f) => f.path)).toEqual(['b.md']);
    expect(store.hasUnsettledRemote()).toBe(true);
    expect(
      store.recordListing([
        { id: 'r1', status: 'processed', error: null, chunkCount: null },
        { id: 'r2', status: 'failed', error: 'unsupported_format', chunkCount: null },
      ]),
    ).toBe(2);
    expect(store.setRemoteStatus('r1', 'processed')).toBe(0);
    expect(store.hasUnsettledRemote()).toBe(false);
    const index = store.loadTrackedFiles();
    expect([...index.keys()].length).toBe(2);
    expect(index.find('docs', 'b.md')).toMatchObject({ remoteStatus: 'failed', remoteError: 'unsupported_format', remoteName: 'b.md' });
    expect(index.find('docs', 'a.md')).toMatchObject({ remoteName: 'docs/a.md', mtimeNs: '1718000000123456789' });
    expect(store.markDeleted('docs', 'a.md', 'gone')).toBe(true);
    expect(store.getTracked('docs', 'a.md')).toMatchObject({ lastAction: 'deleted', lastReason: 'gone' });
    expect(store.trackedCount()).toBe(1); // as `kbsync status` counts: a file deleted locally is not tracked
    expect(store.trackedCount('failed')).toBe(1);
    expect(store.trackedCount('processed')).toBe(0);
    expect(store.removeTracked('docs', 'a.md')).toBe(true);
    expect(store.removeTracked('docs', 'a.md')).toBe(false);
    expect(store.getTracked('nope', 'a.md')).toBeNull();
  });

  it('records the chunk count the listing gave for a remote copy, and keeps it while the copy stays the same', () => {
    const file = uploaded({ remoteName: 'a.md', remoteStatus: 'queued' });
    store.upsertTracked(file);
    expect(store.getTracked('docs', 'a.md')?.remoteChunks).toBeUndefined();
    const listed = (chunkCount: number | null) => store.recordListing([{ id: 'r1', status: 'processed', error: null, chunkCount }]);
    expect(listed(4)).toBe(1);
    expect(store.getTracked('docs', 'a.md')).toMatchObject({ remoteStatus: 'processed', remoteChunks: 4 });
    // TrackedIndex's bulk load reads it too (a detail field): `kbsync status` shows it per file.
    const index = store.loadTrackedFiles();
    expect(index.find('docs', 'a.md')).toMatchObject({ remoteChunks: 4, reprocessAttempts: 0, lastAction: 'upload' });
    // A listing that says nothing of the count keeps it; a new count is recorded even when the status stays.
    expect(listed(null)).toBe(0);
    expect(listed(5)).toBe(1);
    expect(store.findBySha256(sha(1))[0]?.remoteChunks).toBe(5);
    // A row written again for the same copy keeps it; one pointing at another copy does not.
    store.upsertTracked({ ...file, remoteStatus: 'processed', lastAction: 'unchanged' });
    expect(store.getTracked('docs', 'a.md')?.remoteChunks).toBe(5);
    store.upsertTracked({ ...file, remoteId: 'r2' });
    expect(store.getTracked('docs', 'a.md')?.remoteChunks).toBeUndefined();
  });

  it('holds the remote copies no tracked file points at: a row that moves on leaves its copy here, one that takes it back removes it', () => {
    const file = uploaded({ remoteName: 'docs/a.md', remoteStatus: 'processed' });
    store.upsertTracked(file);
    expect(store.heldCopies()).toEqual([]);
    // Uploaded again with other content: r1 stays in the dataset, held by no row.
    store.upsertTracked({ ...file, sha256: sha(2), remoteId: 'r2', remoteStatus: 'queued' });
    expect(store.heldCopies()).toEqual([{ remoteId: 'r1', sha256: sha(1), remoteName: 'docs/a.md', status: 'processed' }]);
    // Statuses learned from a listing reach held copies too.
    store.recordListing([{ id: 'r1', status: 'failed', error: null, chunkCount: null }]);
    expect(store.heldCopies()).toMatchObject([{ remoteId: 'r1', status: 'failed' }]);
    store.setRemoteStatus('r1', 'processed');
    expect(store.heldCopies()).toMatchObject([{ remoteId: 'r1', status: 'processed' }]);
    // Pointed back at r1: r1 is the row's again, r2 is held now (with the status the row last had).
    store.upsertTracked({ ...file, remoteStatus: 'processed' });
    expect(store.heldCopies()).toEqual([{ remoteId: 'r2', sha256: sha(2), remoteName: 'docs/a.md', status: 'queued' }]);
    // A new row that takes a held copy (a path recorded against it) removes it too; a row written without a change of copy leaves it.
    store.upsertTracked({ ...file, path: 'b.md', remoteName: 'a.md', sha256: sha(2), remoteId: 'r2' });
    store.upsertTracked({ ...file, lastReason: 'touched' });
    expect(store.heldCopies()).toEqual([]);
    // Asked by content: by the sha256 index for a few hashes, by one read of the table for many.
    store.upsertTracked({ ...file, sha256: sha(3), remoteId: 'r3' });
    store.upsertTracked({ ...file, sha256: sha(4), remoteId: 'r4' });
    expect(store.heldCopies([sha(3)]).map((c) => c.remoteId)).toEqual(['r3']);
    expect(store.heldCopies([sha(5), sha(1), sha(3)]).map((c) => c.remoteId)).toEqual(['r1', 'r3']);
    expect(store.heldCopies([sha(5)])).toEqual([]);
    expect(store.heldCopies([])).toEqual([]);
  });

  it('loads every tracked file with its details, also paths and remote ids holding a control character', () => {
    const base = {
      source: 'docs',
      size: 3,
      mtimeNs: '-1',
      inode: 9,
      remoteStatus: null,
      reprocessAttempts: 2,
      lastAction: 'rebuilt',
      lastReason: 'why',
    };
    store.upsertTrackedMany([
      { ...base, path: 'plain.md', sha256: sha(1), remoteName: 'plain.md', remoteId: null },
      { ...base, path: 'odd\u0001name.md', sha256: sha(2), remoteName: 'docs/odd\u0001name.md', remoteId: 'id\u0001x' },
    ]);
    store.upsertTracked({ ...base, source: 'other', path: 'z.md', sha256: sha(3), remoteName: 'elsewhere.md', remoteId: '7' });
    const index = store.loadTrackedFiles();
    expect(
      [...index.values()].map((f) => [f.source, f.path, f.remoteId, f.remoteName, f.reprocessAttempts, f.lastReason, f.mtimeNs]),
    ).toEqual([
      ['docs', 'odd\u0001name.md', 'id\u0001x', 'docs/odd\u0001name.md', 2, 'why', '-1'],
      ['docs', 'plain.md', null, 'plain.md', 2, 'why', '-1'],
      ['other', 'z.md', '7', 'elsewhere.md', 2, 'why', '-1'],
    ]);
  });

  it('passes over every tracked file in the order loadTrackedFiles gives, a failed copy with its reason, pages past pages', () => {
    const rows = (source: string, n: number): TrackedFileInput[] =>
      Array.from({ length: n }, (_, i) => ({
        ...uploaded({ remoteName: `${source}/f${i}.md`, remoteStatus: i === 7 ? 'failed' : 'processed' }),
        source,
        path: `f${String(i).padStart(5, '0')}.md`,
        remoteId: `${source}-${i}`,
      }));
    // More rows than a page, in sources written out of name order, one of them with a single row.
    store.upsertTrackedMany([...rows('zeta', 1), ...rows('docs', 5000), ...rows('alpha', 2100)]);
    store.recordListing([{ id: 'docs-7', status: 'failed', error: 'parse_error: no text', chunkCount: null }]);
    const strip = (f: TrackedFile) => ({ ...f, updatedAt: null });
    const passed = [...store.passTrackedFiles()].map(strip);
    expect(passed.map((f) => `${f.source}/${f.path}`)).toEqual([...store.loadTrackedFiles().keys()].map((k) => k.replace('\0', '/')));
    expect(passed).toEqual([...store.loadTrackedFiles().values()].map(strip));
    expect(passed.find((f) => f.remoteId === 'docs-7')?.remoteError).toBe('parse_error: no text');
    expect(passed).toHaveLength(7101);
  });

  it('rebuilds from the remote listing once, keeping rows already tracked, and clears the pending check', () => {
    expect(store.remoteCheckPending()).toBe(true);
    const report = store.rebuildFromRemote(
      [
        { id: '1', name: 'docs/a.md', size: 5, sha256: sha(1), status: 'processed' },
        { id: '2', name: 'docs/a.md', size: 6, sha256: sha(2), status: 'queued' },
        { id: '3', name: 'other/x.md', size: 1, sha256: sha(3), status: 'processed' },
        { id: '4', name: 'docs/b.md', size: 1, sha256: null, status: 'processed' },
      ],
      (name) => (name.startsWith('docs/') ? { source: 'docs', path: name.slice(5) } : null),
    );
    expect(report).toEqual({ inserted: 1, unmapped: 1, withoutHash: 1, superseded: 1, kept: 0 });
    expect(store.getTracked('docs', 'a.md')).toMatchObject({ remoteId: '2', sha256: sha(2), lastAction: 'rebuilt', mtimeNs: '-1' });
    // The older upload of a.md is held: a.md going back to that content reuses it.
    expect(store.heldCopies()).toEqual([{ remoteId: '1', sha256: sha(1), remoteName: 'docs/a.md', status: 'processed' }]);
    expect(store.remoteCheckPending()).toBe(false);
  });

  it('moves ops through the outbox: pending, in flight, done; an open op for the same work is reused', () => {
    const run = store.startRun('sync');
    const id = store.enqueue({ ...uploadOp('a.md', 5, sha(1)), runId: run });
    expect(store.enqueue({ ...uploadOp('a.md', 6, sha(1)), runId: run })).toBe(id);
    expect(store.getOp(id)).toMatchObject({ state: 'pending', credits: 6, source: 'docs', sha256: sha(1), remoteName: 'a.md' });
    const newer = store.enqueue({ ...uploadOp('a.md', 5, sha(2)), runId: run });
    expect(store.getOp(id)).toMatchObject({ state: 'cancelled', error: 'superseded by newer content' });
    expect(store.pendingOps().map((o) => o.id)).toEqual([newer]);
    expect(store.reserve(newer, { run: BIG, day: BIG, month: BIG }, run)).toEqual({ ok: true });
    expect(store.inFlightOps().map((o) => o.id)).toEqual([newer]);
    store.settle(newer, { outcome: 'done', creditsCharged: 4, remoteId: 'r9', remoteStatus: 'queued' });
    expect(store.getOp(newer)).toMatchObject({ state: 'done', reserved: 0, remoteId: 'r9' });
    expect(store.getTracked('docs', 'a.md')).toMatchObject({ remoteId: 'r9', sha256: sha(2), lastAction: 'upload' });
    expect(store.creditsUsed(run)).toMatchObject({ run: 4, month: 4, spent: { run: 4, day: 4, month: 4 } });
    expect(store.ledgerTotals().all).toEqual({ reserve: 5, release: 0, spend: 4, reserved: 0, spent: 4 });
    expect(() => store.settle(newer, { outcome: 'done', creditsCharged: 4, remoteId: 'r9' })).toThrow(/is done, expected in_flight/);
    expect(store.opsForPath('docs', 'a.md').map((o) => o.state)).toEqual(['cancelled', 'done']);
  });

  it('after a failed sync, an op left in flight (its outcome not written) becomes unknown; the same work then reuses it, never a second call', () => {
    const run = store.startRun('sync');
    const id = store.enqueue({ ...uploadOp('a.md', 5, sha(1)), runId: run });
    expect(store.reserve(id, { run: BIG, day: BIG, month: BIG }, run)).toEqual({ ok: true });
    expect(store.abandonInFlight()).toBe(1);
    expect(store.getOp(id)).toMatchObject({ state: 'unknown', errorCode: 'unknown_outcome', reserved: 5 });
    expect(store.inFlightOps()).toEqual([]);
    expect(store.unknownOps().map((o) => o.id)).toEqual([id]);
    // The next sync's enqueue of the same content is that op, reconciled before it is sent again.
    expect(store.enqueue({ ...uploadOp('a.md', 5, sha(1)), runId: store.startRun('sync') })).toBe(id);
    expect(store.abandonInFlight()).toBe(0);
  });

  it.each(['query', 'chat', 'reindex', 'agent_create', 'agent_config'] as const)('carries a %s op through reserve and settle', (kind) => {
    const run = store.startRun(kind);
    const id = store.enqueue({ kind, credits: 2, reason: 'asked', runId: run });
    expect(store.reserve(id, { run: BIG, day: BIG, month: BIG }, run)).toEqual({ ok: true });
    store.settle(id, { outcome: 'done', creditsCharged: 2 });
    expect(store.getOp(id)).toMatchObject({ kind, state: 'done', source: null, path: null, reason: 'asked' });
    expect(store.creditsUsed(run).spent.run).toBe(2);
  });

  it('writes an op of every kind in OP_KINDS, and refuses a kind outside it before anything is written', () => {
    const run = store.startRun('sync');
    for (const kind of OP_KINDS.filter((k) => k !== 'upload' && k !== 'reprocess' && k !== 'intelligence' && k !== 'intelligence_batch'))
      expect(store.getOp(store.enqueue({ kind, credits: 1, reason: 'asked', runId: run }))).toMatchObject({ kind, state: 'pending' });
    const pending = store.pendingOps().length;

    expect(() => store.enqueue({ kind: 'agent_delete' as 'query', credits: 1, reason: 'asked', runId: run })).toThrow(
      /unknown operation kind "agent_delete"/,
    );
    expect(store.pendingOps()).toHaveLength(pending);
  });

  it('admits exactly up to each cap and names the first period that would overrun', () => {
    const run = store.startRun('sync');
    const caps = { run: BIG, day: BIG, month: 12 };
    const ids = [1, 2, 3, 4].map((n) => store.enqueue({ ...uploadOp(`${n}.md`, n === 4 ? 1 : n === 3 ? 2 : 5, sha(n)), runId: run }));
    expect(ids.map((id) => store.reserve(id, caps, run))).toEqual([
      { ok: true },
      { ok: true },
      { ok: true },
      { ok: false, period: 'month', used: 12, cap: 12 },
    ]);
    expect(store.getOp(ids[3] as number)).toMatchObject({ state: 'pending', reserved: 0 });
    expect(store.budgetWindow(caps, run)).toEqual({ caps, used: { run: 12, day: 12, month: 12 } });
    const next = store.enqueue({ ...uploadOp('5.md', 5, sha(5)), runId: run });
    expect(store.reserve(next, { run: 4, day: 4, month: BIG }, run)).toEqual({ ok: false, period: 'run', used: 12, cap: 4 });
  });

  it('releases a failed call and keeps an unknown one reserved until it is resolved', () => {
    const run = store.startRun('sync');
    const caps = { run: BIG, day: BIG, month: BIG };
    const failed = store.enqueue({ ...uploadOp('a.md', 5, sha(1)), runId: run });
    const unknown = store.enqueue({ ...uploadOp('b.md', 7, sha(2)), runId: run });
    const lost = store.enqueue({ ...uploadOp('c.md', 3, sha(3)), runId: run });
    for (const id of [failed, unknown, lost]) expect(store.reserve(id, caps, run)).toEqual({ ok: true });
    store.settle(failed, { outcome: 'failed', code: 'unsupported_format', error: 'no' });
    store.settle(unknown, { outcome: 'unknown', code: 'unknown_outcome', error: 'timeout' });
    store.settle(lost, { outcome: 'unknown', code: 'unknown_outcome', error: 'timeout' });
    expect(store.getOp(failed)).toMatchObject({ state: 'failed', reserved: 0, errorCode: 'unsupported_format' });
    expect(store.unknownOps().map((o) => o.id)).toEqual([unknown, lost]);
    expect(store.creditsUsed(run).reserved.run).toBe(10);
    store.resolveUnknown(unknown, { remoteId: 'r2', status: 'processed' });
    store.resolveUnknown(lost, null);
    expect(store.getOp(unknown)).toMatchObject({ state: 'done' });
    expect(store.getTracked('docs', 'b.md')).toMatchObject({ remoteId: 'r2', remoteStatus: 'processed' });
    const again = store.getOp(lost);
    expect(again).toMatchObject({ state: 'pending', reserved: 0, attempts: 1 });
    expect(store.creditsUsed(run)).toMatchObject({ run: 7, spent: { run: 7 }, reserved: { run: 0 } });
    // Retried with the same idempotency key.
    expect(store.reserve(lost, caps, run)).toEqual({ ok: true });
    expect(store.getOp(lost)?.idempotencyKey).toBe(again?.idempotencyKey);
    expect(store.getOp(lost)?.attempts).toBe(2);
    store.settle(lost, { outcome: 'done', creditsCharged: null, remoteId: 'r3' });
    expect(store.cancelOp.bind(store, lost)).toThrow(/not pending/);
  });

  it('counts a reservation in the day and month it was made, also when it settles after midnight', () => {
    clock.set('2025-03-31T23:59:00.000Z');
    const run = store.startRun('sync');
    const id = store.enqueue({ ...uploadOp('a.md', 5, sha(1)), runId: run });
    store.reserve(id, { run: BIG, day: BIG, month: BIG }, run);
    clock.set('2025-04-01T00:01:00.000Z');
    store.settle(id, { outcome: 'done', creditsCharged: 5, remoteId: 'r1' });
    expect(store.creditsUsed(run)).toMatchObject({ run: 5, day: 0, month: 0, utcMonth: '2025-04' });
    expect(store.ledgerTotals().byMonth.get('2025-03')).toEqual({ reserved: 0, spent: 5 });
  });

  it('records runs, the last run of a command, and meta', () => {
    const a = store.startRun('plan');
    const b = store.startRun('sync');
    store.finishRun(a, 'done', { files: 3 });
    expect(store.getRun(a)).toMatchObject({ command: 'plan', status: 'done', summary: { files: 3 } });
    expect(store.lastRun()?.id).toBe(b);
    expect(store.lastRun('plan')?.id).toBe(a);
    expect(store.lastRun('sync')?.status).toBe('running');
    expect(() => store.finishRun(a, 'done', null)).toThrow(/not running/);
    store.setMeta('k', 'v');
    expect(store.getMeta('k')).toBe('v');
    store.setMeta('k', null);
    expect(store.getMeta('k')).toBeNull();
    store.setLastSyncedCommit('repo', 'abc', 'url#sub');
    expect(store.lastSyncedCommit('repo', 'url#sub')).toBe('abc');
    expect(store.lastSyncedCommit('repo', 'other')).toBeNull();
  });

  it('keeps intelligence writes (their payload) and entries, their statuses, and names remote ids by file or entry', () => {
    const run = store.startRun('sync');
    const payload = { agentId: 'ag1', entries: [{ sha256: sha(7), source: 'docs', path: 'faq.json#q1', title: 'Q1' }] };
    const op = { kind: 'intelligence' as const, source: 'docs', path: 'faq.json#q1', digest: sha(8), payload, credits: 1, runId: run };
    const id = store.enqueue(op);
    expect(store.enqueue(op)).toBe(id);
    expect(store.getOp(id)).toMatchObject({ kind: 'intelligence', payload, sha256: sha(8) });
    store.transaction(() => {
      expect(store.reserve(id, { run: BIG, day: BIG, month: BIG }, run)).toEqual({ ok: true });
      store.settle(id, { outcome: 'done', creditsCharged: 1, remoteId: 'e1' });
      store.recordEntries([
        { sha256: sha(7), agentId: 'ag1', remoteId: 'e1', status: 'pending', source: 'docs', path: 'faq.json#q1', title: 'Q1' },
      ]);
    });
    expect(store.setEntryStatus('e1', 'failed', 'too long')).toBe(1);
    expect(store.trackedEntries().get(sha(7))).toMatchObject({
      remoteId: 'e1',
      status: 'failed',
      error: 'too long',
      source: 'docs',
      path: 'faq.json#q1',
    });
    store.upsertTracked({
      source: 'docs',
      path: 'a.md',
      size: 1,
      mtimeNs: '1',
      inode: 1,
      sha256: sha(9),
      remoteName: 'a.md',
      remoteId: 'f1',
      remoteStatus: 'queued',
      reprocessAttempts: 0,
      lastAction: 'upload',
      lastReason: null,
    });
    expect(store.originsOfRemoteIds(['f1', 'e1', 'zz'])).toEqual(
      new Map([
        ['f1', { source: 'docs', path: 'a.md' }],
        ['e1', { source: 'docs', path: 'faq.json#q1', entry: true }],
      ]),
    );
  });

  it('refuses a replayed webhook delivery and lists the newest first', () => {
    const e = (id: string, at: number) => ({ id, type: 'webhook.test', sentAtSec: 1, receivedAtMs: at, data: { n: at } });
    expect(store.recordWebhookEvent(e('a', 1))).toBe(true);
    expect(store.recordWebhookEvent(e('b', 2))).toBe(true);
    expect(store.recordWebhookEvent(e('a', 3))).toBe(false);
    expect(store.webhookEventSeen('a')).toBe(true);
    expect(store.webhookEventSeen('z')).toBe(false);
    expect(store.webhookEvents().map((w) => [w.id, w.data])).toEqual([
      ['b', { n: 2 }],
      ['a', { n: 1 }],
    ]);
  });

  it('forgets webhook deliveries past the retention at the next open, and as it records (at most once an hour)', () => {
    const DAY = 86_400_000;
    const at = (ago: number) => clock.now().getTime() - ago;
    const e = (id: string, ago: number) => ({
      id,
      type: 'webhook.test',
      sentAtSec: Math.floor(at(ago) / 1000),
      receivedAtMs: at(ago),
      data: null,
    });
    expect(store.recordWebhookEvent(e('old', 31 * DAY))).toBe(true);
    expect(store.recordWebhookEvent(e('recent', DAY))).toBe(true);
    store.close();
    opened.splice(opened.indexOf(store), 1);
    store = open();
    expect(store.webhookEvents().map((w) => w.id)).toEqual(['recent']);
    // A daemon runs for months without an open: a delivery recorded over an hour after the last prune prunes.
    expect(store.recordWebhookEvent(e('old-too', 40 * DAY))).toBe(true);
    clock.advance(61 * 60_000);
    expect(store.recordWebhookEvent(e('new', 0))).toBe(true);
    expect(store.webhookEvents().map((w) => w.id)).toEqual(['new', 'recent']);
  });

  it('rolls back everything a transaction wrote when it throws', () => {
    const before = store.trackedCount();
    expect(() =>
      store.transaction(() => {
        store.setMeta('inside', 'yes');
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(store.getMeta('inside')).toBeNull();
    expect(store.transaction(() => (store.setMeta('inside', 'yes'), 7))).toBe(7);
    expect(store.getMeta('inside')).toBe('yes');
    expect(store.trackedCount()).toBe(before);
  });

  it('leaves what a dead process had in flight as unknown for the next open, its run interrupted', () => {
    store.close();
    const first = open();
    const run = first.startRun('sync');
    const id = first.enqueue({ ...uploadOp('a.md', 5, sha(1)), runId: run });
    first.reserve(id, { run: BIG, day: BIG, month: BIG }, run);
    first.close(); // as a kill would: no settle
    store = open();
    expect(store.recoveredInFlight).toBe(1);
    expect(store.getOp(id)).toMatchObject({ state: 'unknown', reserved: 5 });
    expect(store.getRun(run)?.status).toBe('interrupted');
    expect(isKbsyncError(new Error('x'))).toBe(false);
  });
});
