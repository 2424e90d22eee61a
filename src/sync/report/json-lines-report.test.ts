import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeObservation, fakeSha, planInput } from '../../../test/helpers/plan-fakes.js';
import { planSync } from '../planner/plan-sync.js';
import { openState, type StateStore, type TrackedFileInput } from '../state/index.js';
import type { TrackedIndex } from '../tracked-index.js';
import type { RemoteStatus, SyncPlan } from '../types.js';
import { jsonPlanParts } from './json-lines-report.js';
import { jsonReportChunks } from './json-report.js';
import { LINES_PER_BATCH, UnchangedLines } from './unchanged-lines.js';

/**
 * The report with the unchanged files' lines made by the helper thread (a real worker, reading the
 * rows of a real SQLite state) must be jsonReportChunks' document byte for byte, whichever items
 * take a line and whichever the report makes itself.
 */
let dir: string;
let state: StateStore;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kbsync-json-lines-'));
  state = openState(join(dir, 'state.db'));
});
afterAll(() => {
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

// Paths that JSON escapes or encodes in several bytes, and plain ones: enough rows for three batches.
const ROWS = 2 * LINES_PER_BATCH + 100;
const pathOf = (i: number): string =>
  `${['a', 'ünï', 'quote"back\\slash', 'emoji-😀', 'tab\tname', 'plain'][i % 6]}/f-${String(i).padStart(5, '0')}.md`;
const statusOf = (i: number): RemoteStatus | null =>
  i % 97 === 3 ? 'queued' : i % 101 === 5 ? 'failed' : i % 89 === 7 ? null : 'processed';

function tracked(source: string, i: number): TrackedFileInput {
  return {
    source,
    path: pathOf(i),
    size: 100 + i,
    mtimeNs: '1600000000000000000',
    inode: i + 1,
    sha256: fakeSha(`${source}/${i}`),
    remoteName: i % 50 === 0 ? `renamed/${pathOf(i)}` : pathOf(i),
    // Some rows have no remote copy (not in the dataset): their files are candidates, not unchanged.
    remoteId: i % 83 === 1 ? null : `r-${source}-${i}`,
    remoteStatus: statusOf(i),
    reprocessAttempts: 0,
    lastAction: 'upload',
    lastReason: null,
  };
}

/** A plan over two sources: most files unchanged, some changed, new, vanished or unsupported. */
function makePlan(index: TrackedIndex): SyncPlan {
  const obs = fakeObservation(['docs', 'more']);
  for (const source of ['docs', 'more']) {
    for (let i = 0; i < ROWS; i++) {
      if (i % 71 === 2) continue; // vanished: a delete item
      const row = tracked(source, i);
      // Every 13th file changed (another hash), every 29th with another size and the same hash (not unchanged by stat).
      const changed = i % 13 === 4;
      obs.file(row.path, {
        source,
        size: i % 29 === 6 ? row.size + 1 : row.size,
        sha: changed ? fakeSha(`changed ${i}`) : row.sha256,
        mtimeNs: row.mtimeNs,
        inode: row.inode,
      });
      if (i % 7 === 0) obs.skipped(`${row.path}.exe`, 'unsupported', { source, detail: '.exe' });
    }
    obs.file(`new-${source}.md`, { source, content: `new in ${source}` });
  }
  return planSync(planInput({ observation: obs.build(), tracked: index }));
}

const bytesOf = (parts: Iterable<string | Uint8Array>): Buffer =>
  Buffer.concat([...parts].map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('jsonPlanParts', () => {
  it('with every line made: the same bytes as jsonReportChunks, most unchanged items copied from the helper', async () => {
    state.upsertTrackedMany([
      ...Array.from({ length: ROWS }, (_, i) => tracked('docs', i)),
      ...Array.from({ length: ROWS }, (_, i) => tracked('more', i)),
    ]);
    const index = state.loadTrackedFiles();
    const plan = makePlan(index);
    const lines = UnchangedLines.start(2);
    expect(lines).not.toBeNull();
    if (lines === null) return;
    try {
      lines.send(index, 0);
      expect(await lines.finished()).toBe(true);
      const expected = Buffer.from([...jsonReportChunks(plan)].join(''));
      expect(bytesOf(jsonPlanParts(plan, index, lines)).equals(expected)).toBe(true);
      const unchanged = plan.items.filter((i) => i.action === 'skip:unchanged').length;
      // Files whose size moved are unchanged by hash but print the observed size: made here, not copied.
      expect(lines.used).toBeGreaterThan(unchanged * 0.9);
      expect(lines.used).toBeLessThan(unchanged);
      // The document's first item is an unchanged file's line (its comma left out).
      expect(plan.items[0]?.action).toBe('skip:unchanged');
    } finally {
      lines.stop();
    }
  });

  it('with no line made (the helper stopped first), or an index changed since: the same bytes, every item made here', async () => {
    const index = state.loadTrackedFiles();
    const plan = makePlan(index);
    const expected = Buffer.from([...jsonReportChunks(plan)].join(''));

    const stopped = UnchangedLines.start(2);
    if (stopped === null) throw new Error('no helper');
    stopped.stop();
    stopped.send(index, 0);
    expect(bytesOf(jsonPlanParts(plan, index, stopped)).equals(expected)).toBe(true);
    expect(stopped.used).toBe(0);

    const lines = UnchangedLines.start(2);
    if (lines === null) throw new Error('no helper');
    try {
      lines.send(index, 0);
      expect(await lines.finished()).toBe(true);
      index.add({ ...index.fileAt(0), path: 'zzz-added.md' }); // row numbers may move: no line is trusted
      expect(bytesOf(jsonPlanParts(plan, index, lines)).equals(expected)).toBe(true);
      expect(lines.used).toBe(0);
    } finally {
      lines.stop();
    }
  });

  it('a small index is left to the report: no helper work below the threshold', () => {
    const index = state.loadTrackedFiles();
    const lines = UnchangedLines.start(2);
    if (lines === null) throw new Error('no helper');
    lines.send(index); // fewer rows than UNCHANGED_LINES_MIN_ROWS
    const plan = makePlan(index);
    expect(bytesOf(jsonPlanParts(plan, index, lines)).equals(Buffer.from([...jsonReportChunks(plan)].join('')))).toBe(true);
    expect(lines.used).toBe(0);
  });

  it('one core: no helper', () => {
    expect(UnchangedLines.start(1)).toBeNull();
  });
});
