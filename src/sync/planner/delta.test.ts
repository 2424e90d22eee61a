import { describe, expect, it } from 'vitest';
import { fakeBudget, fakeSha, planInput } from '../../../test/helpers/plan-fakes.js';
import { createPrng } from '../../../test/helpers/prng.js';
import { TrackedIndex } from '../tracked/tracked-index.js';
import type { ObservedFile, PlanInput, PlanItem, SkippedPath, TrackedFile } from '../types.js';
import { deltaOf } from './delta.js';
import { UnchangedRows } from '../tracked/unchanged-rows.js';
import { planSync } from './plan-sync.js';
import { unlistedRows } from './unlisted.js';
import { compareByPath } from '../tracked/keys.js';
import { jsonReportChunks } from '../report/json-report.js';
import { formatPlan } from '../report/format-plan.js';

/**
 * A random tree and its tracked state, with every kind of change a plan meets: unchanged files, files
 * touched (stat moved, same content), edited, new (some with the content of a vanished row: renames;
 * some of a tracked file still there: duplicates), vanished rows, remote copies failed or missing,
 * tracked paths now skipped, and a budget that may not hold everything.
 */
function scenario(seed: number): PlanInput {
  const rng = createPrng(seed);
  const tracked: TrackedFile[] = [];
  const files: ObservedFile[] = [];
  const skipped: SkippedPath[] = [];
  const vanishedContent: string[] = [];
  let id = 1;
  const n = rng.int(20, 80);
  for (let i = 0; i < n; i++) {
    const path = `f${rng.int(0, 3)}/doc-${i}.md`;
    const content = `c${i}`;
    const row: TrackedFile = {
      source: 'docs',
      path,
      size: 100 + i,
      mtimeNs: `${1_600_000_000_000_000_000n + BigInt(i)}`,
      inode: 1000 + i,
      sha256: fakeSha(content),
      remoteName: path,
      remoteId: rng.chance(0.1) ? null : String(id++),
      remoteStatus: rng.chance(0.1) ? 'failed' : 'processed',
      reprocessAttempts: rng.int(0, 2),
      remoteError: null,
      lastAction: 'upload',
      lastReason: 'new file',
      updatedAt: '2024-05-01T00:00:00.000Z',
    };
    tracked.push(row);
    const fate = rng.next();
    const same = { source: 'docs', path, absPath: `/src/docs/${path}`, size: row.size, mtimeNs: row.mtimeNs, inode: row.inode };
    if (fate < 0.55) files.push({ ...same, sha256: row.sha256 });
    else if (fate < 0.65) files.push({ ...same, mtimeNs: `${BigInt(row.mtimeNs) + 7n}`, sha256: row.sha256 });
    else if (fate < 0.75) files.push({ ...same, size: row.size + 1, sha256: fakeSha(`${content} edited`) });
    else if (fate < 0.8) files.push({ ...same, mtimeNs: '1', sha256: null });
    else if (fate < 0.85) skipped.push({ source: 'docs', path, reason: 'ignored', detail: 'matches .gitignore', size: null });
    else vanishedContent.push(content);
  }
  for (let i = 0; i < rng.int(0, 30); i++) {
    const path = `f${rng.int(0, 4)}/new-${i}.md`;
    const pick = rng.next();
    const content =
      pick < 0.3 && vanishedContent.length > 0
        ? (vanishedContent[rng.int(0, vanishedContent.length - 1)] as string)
        : pick < 0.45
          ? `c${rng.int(0, n - 1)}`
          : `new ${i}`;
    files.push({
      source: 'docs',
      path,
      absPath: `/src/docs/${path}`,
      size: rng.int(1, 8) << 20,
      mtimeNs: '5',
      inode: 5000 + i,
      sha256: fakeSha(content),
    });
  }
  for (let i = 0; i < rng.int(0, 5); i++)
    skipped.push({ source: 'docs', path: `f0/image-${i}.png`, reason: 'unsupported', detail: '', size: 10 });
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const observation = {
    files,
    skipped,
    sources: [{ name: 'docs', kind: 'folder' as const, root: '/src/docs', commit: null, scope: null }],
  };
  return planInput({
    observation,
    tracked: new Map(tracked.map((t) => [`${t.source}\0${t.path}`, t])),
    plan: rng.chance(0.5) ? 'enterprise' : 'basic',
    budget: fakeBudget({ run: rng.chance(0.5) ? rng.int(0, 60) : 1_000_000 }),
    reindexMinChangedFiles: rng.int(1, 10),
  });
}

/** The scenario with its files, rows and skip entries under f0/ moved to a second source, "a-wiki" (named before "docs"). */
function twoSources(input: PlanInput): PlanInput {
  const move = <T extends { source: string; path: string }>(x: T): T => (x.path.startsWith('f0/') ? { ...x, source: 'a-wiki' } : x);
  const tracked = [...input.tracked.values()].map(move);
  const observation = {
    ...input.observation,
    files: input.observation.files.map(move).sort(compareByPath),
    skipped: input.observation.skipped.map(move).sort(compareByPath),
    sources: [{ name: 'a-wiki', kind: 'folder' as const, root: '/src/wiki', commit: null, scope: null }, ...input.observation.sources],
  };
  return { ...input, observation, tracked: new Map(tracked.map((t) => [`${t.source}\0${t.path}`, t])), multiSource: true };
}

describe('a delta plan (kbsync watch) against the full plan of the same change', () => {
  it('plans the same items but the unchanged files whose stat did not move, which it counts: same totals, counts, budget and reindex (300 random trees)', () => {
    let leftOutSeen = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const input = scenario(seed);
      const full = planSync(input);
      const index = TrackedIndex.of(input.tracked.values());
      const split = deltaOf(input.observation.files, index, null);
      const delta = planSync({
        ...input,
        tracked: index,
        observation: { ...input.observation, files: split.files },
        delta: { vanished: split.vanished, unchanged: split.unchanged },
      });
      const leftOut = new Set(input.observation.files.filter((f) => !split.files.includes(f)).map((f) => f.path));
      leftOutSeen += leftOut.size;
      const expected = full.items.filter((i: PlanItem) => !leftOut.has(i.path));
      expect(
        full.items.filter((i) => leftOut.has(i.path)).every((i) => i.action === 'skip:unchanged'),
        `seed ${seed}`,
      ).toBe(true);
      // Only files whose row records nothing new: a stat that moved is written by the sync (record-free.ts).
      for (const f of input.observation.files.filter((x) => leftOut.has(x.path))) {
        const t = input.tracked.get(`docs\0${f.path}`);
        expect([t?.size, t?.mtimeNs, t?.inode], `seed ${seed} ${f.path}`).toEqual([f.size, f.mtimeNs, f.inode]);
      }
      expect(delta.items, `seed ${seed}`).toEqual(expected);
      expect(delta.totals, `seed ${seed}`).toEqual(full.totals);
      expect(delta.counts, `seed ${seed}`).toEqual(full.counts);
      expect(delta.reindex, `seed ${seed}`).toEqual(full.reindex);
      expect(delta.budget, `seed ${seed}`).toEqual(full.budget);
      expect(delta.unchangedNotListed, `seed ${seed}`).toBe(leftOut.size);
    }
    expect(leftOutSeen).toBeGreaterThan(1000);
  });

  it('files a full walk dropped as unchanged (UnchangedRows) make the same delta as when they are split off after (300 random trees)', () => {
    let droppedSeen = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const input = scenario(seed);
      const index = TrackedIndex.of(input.tracked.values());
      const late = deltaOf(input.observation.files, index, null);
      // As the walk does: each file offered as its lstat comes, before any hashing (sha256 unknown).
      const walked = new UnchangedRows(index);
      const kept = input.observation.files.filter((f) => !walked.take(f.source, f.path, f));
      droppedSeen += walked.count;
      const early = deltaOf(kept, index, null, walked);
      expect(early.files, `seed ${seed}`).toEqual(late.files);
      expect(early.vanished, `seed ${seed}`).toEqual(late.vanished);
      expect(early.unchanged, `seed ${seed}`).toBe(late.unchanged);
    }
    expect(droppedSeen).toBeGreaterThan(1000);
  });

  it("a report of a counted plan, its unchanged items made from their rows, is the full plan's report: --json, --all and the text alike, one source or two (300 random trees each)", () => {
    let counted = 0;
    for (const several of [false, true]) {
      for (let seed = 1; seed <= 300; seed++) {
        const input = several ? twoSources(scenario(seed)) : scenario(seed);
        const full = planSync(input);
        const index = TrackedIndex.of(input.tracked.values());
        const walked = new UnchangedRows(index);
        const kept = input.observation.files.filter((f) => !walked.take(f.source, f.path, f));
        const split = deltaOf(kept, index, null, walked);
        const delta = planSync({
          ...input,
          tracked: index,
          observation: { ...input.observation, files: split.files },
          delta: { vanished: split.vanished, unchanged: split.unchanged },
        });
        const unlisted = unlistedRows(index, split.unlisted as Uint8Array);
        counted += unlisted.count;
        expect(unlisted.count, `seed ${seed}`).toBe(split.unchanged);
        const json = (plan: typeof full, rows: typeof unlisted | null): unknown => JSON.parse([...jsonReportChunks(plan, rows)].join(''));
        expect(json(delta, unlisted), `seed ${seed}`).toEqual(json(full, null));
        expect([...jsonReportChunks(delta, unlisted)].join(''), `seed ${seed}`).toBe([...jsonReportChunks(full)].join(''));
        expect(formatPlan(delta, { showUnchanged: true, unlisted }), `seed ${seed}`).toBe(formatPlan(full, { showUnchanged: true }));
        expect(formatPlan(delta, { unlisted }), `seed ${seed}`).toBe(formatPlan(full));
      }
    }
    expect(counted).toBeGreaterThan(2000);
  });

  it("the text of a counted plan names each path's source when only the counted files are of the other source", () => {
    const row: TrackedFile = {
      source: 'a-wiki',
      path: 'same.md',
      size: 10,
      mtimeNs: '1',
      inode: 1,
      sha256: fakeSha('same'),
      remoteName: 'a-wiki/same.md',
      remoteId: '1',
      remoteStatus: 'processed',
      reprocessAttempts: 0,
      lastAction: 'upload',
      lastReason: 'new file',
      updatedAt: '2024-05-01T00:00:00.000Z',
    };
    const files: ObservedFile[] = [
      { source: 'a-wiki', path: 'same.md', absPath: '/w/same.md', size: 10, mtimeNs: '1', inode: 1, sha256: row.sha256 },
      { source: 'docs', path: 'new.md', absPath: '/d/new.md', size: 10, mtimeNs: '2', inode: 2, sha256: fakeSha('new') },
    ];
    const sources = ['a-wiki', 'docs'].map((name) => ({ name, kind: 'folder' as const, root: `/${name}`, commit: null, scope: null }));
    const input = planInput({
      observation: { files, skipped: [], sources },
      tracked: new Map([['a-wiki\0same.md', row]]),
      multiSource: true,
    });
    const index = TrackedIndex.of([row]);
    const split = deltaOf(files, index, null);
    const delta = planSync({ ...input, tracked: index, observation: { ...input.observation, files: split.files }, delta: split });
    expect(delta.items.map((i) => i.source)).toEqual(['docs']);
    const unlisted = unlistedRows(index, split.unlisted as Uint8Array);
    expect(formatPlan(delta, { unlisted })).toBe(formatPlan(planSync(input)));
    expect(formatPlan(delta, { unlisted })).toContain('docs/new.md');
  });

  it('a scoped delta leaves the rows outside its scope alone: no delete, no rename source', () => {
    const row = (path: string, content: string, remoteId: string): TrackedFile => ({
      source: 'docs',
      path,
      size: 10,
      mtimeNs: '1',
      inode: 1,
      sha256: fakeSha(content),
      remoteName: path,
      remoteId,
      remoteStatus: 'processed',
      reprocessAttempts: 0,
      lastAction: 'upload',
      lastReason: 'new file',
      updatedAt: '2024-05-01T00:00:00.000Z',
    });
    const index = TrackedIndex.of([row('a/gone.md', 'A', '1'), row('b/out.md', 'B', '2'), row('b/sub/deep.md', 'C', '3')]);
    const files: ObservedFile[] = [
      { source: 'docs', path: 'a/new.md', absPath: '/x', size: 10, mtimeNs: '9', inode: 9, sha256: fakeSha('B') },
    ];
    // The scope: folder a (its own entries). b/out.md is not observed, but out of scope: not deleted,
    // and its content makes a/new.md a duplicate (the content index covers every row), not a rename.
    const split = deltaOf(files, index, index.rowsUnder('docs', 'a', true));
    const input = planInput({
      observation: {
        files: split.files,
        skipped: [],
        sources: [{ name: 'docs', kind: 'folder', root: '/src/docs', commit: null, scope: null }],
      },
      tracked: index,
    });
    const plan = planSync({ ...input, delta: { vanished: split.vanished, unchanged: split.unchanged } });
    expect(plan.items.map((i) => [i.path, i.action])).toEqual([
      ['a/gone.md', 'deleted'],
      ['a/new.md', 'skip:duplicate-content'],
    ]);
  });
});
