import { describe, expect, it } from 'vitest';
import type { TrackedFile } from '../types.js';
import { formatDaemonStatus } from './daemon-lines.js';
import { formatStatus, statusJsonChunks, statusReport } from './status.js';

const file = (path: string, remoteStatus: string | null, lastAction: string): TrackedFile =>
  ({ source: 'docs', path, remoteStatus, lastAction, lastReason: '', remoteId: null }) as unknown as TrackedFile;

describe('the status for people', () => {
  it('writes every count with its digits grouped, the breakdown of tracked files as their total', () => {
    const tracked = [
      ...Array.from({ length: 2912 }, (_, i) => file(`p${i}.md`, 'processed', 'upload')),
      ...Array.from({ length: 1160 }, (_, i) => file(`q${i}.md`, 'processing', 'upload')),
      ...Array.from({ length: 1234 }, (_, i) => file(`d${i}.md`, 'processed', 'deleted')),
    ];
    const text = formatStatus(
      statusReport({
        tracked,
        lastRun: {
          id: 1,
          status: 'done',
          startedAt: 'x',
          finishedAt: null,
          summary: {
            totals: {
              uploaded: 4072,
              unchanged: 12345,
              renamed: 0,
              skipped: 0,
              deferred: 0,
              failed: 0,
              creditsPlanned: 0,
              creditsSpent: 20360,
            },
          },
        },
        credits: { day: 20360, month: 20360, utcDay: 'd', utcMonth: 'm' },
        caps: { run: 100_000, day: 100_000, month: 1_000_000 },
        outbox: { pending: 1500, unknown: 0 },
        entryStatuses: Array.from({ length: 1001 }, () => 'processed'),
      }),
    );
    expect(text).toMatch(/^tracked: +4,072 files \(2,912 processed, 1,160 processing\); 1,234 deleted locally \(remote copies kept\)$/m);
    expect(text).toMatch(/^intelligence entries: +1,001 \(1,001 processed\)$/m);
    expect(text).toMatch(/^credits today: +20,360 of 100,000 /m);
    expect(text).toMatch(/^pending work: +1,500 queued, 0 awaiting reconciliation$/m);
    expect(text).toMatch(/^last sync totals: +4,072 uploaded, 12,345 unchanged, .*; 20,360 credits spent$/m);
    expect(text).not.toMatch(/\d{4}/);
  });

  it("says a running daemon's cycle (why, calls done of planned, credits so far, its ETA) and the service's balance", () => {
    const daemon = {
      pid: 1,
      startedAt: 's',
      http: null,
      ready: true,
      lastSync: null,
      lastError: null,
      waitingFor: [],
      watches: [],
      cycle: { startedAt: 'T0', reasons: ['changes'], done: 1200, total: 3000, creditsSoFar: 1200, etaAt: 'T1' },
      balance: { credits: 98_800, at: 'T2' },
    };
    const text = formatDaemonStatus(daemon);
    expect(text).toMatch(
      /^daemon syncing: +since T0 \(changes\): 1,200 of 3,000 paid calls done, 1,200 credits so far; ends about T1 at upload.requestsPerSecond$/m,
    );
    expect(text).toMatch(/^balance: +98,800 credits, as the service said at T2$/m);
    expect(formatDaemonStatus({ ...daemon, cycle: null, balance: null })).not.toMatch(/syncing|balance/);
  });

  it('names the files whose processing failed (at most 5), not only their count', () => {
    const failed = Array.from({ length: 7 }, (_, i) => file(`bad${i}.json`, 'failed', 'upload'));
    const text = formatStatus(
      statusReport({
        tracked: [file('a.md', 'processed', 'upload'), file('gone.json', 'failed', 'deleted'), ...failed],
        lastRun: null,
        credits: { day: 0, month: 0, utcDay: 'd', utcMonth: 'm' },
        caps: { run: 500, day: 2000, month: 20000 },
        outbox: { pending: 0, unknown: 0 },
      }),
    );
    expect(text).toMatch(/^tracked: +8 files \(1 processed, 7 failed\); 1 deleted locally/m);
    expect(text).toMatch(
      /^failed processing: +bad0\.json, bad1\.json, bad2\.json, bad3\.json, bad4\.json and 2 more \(why: kbsync explain FILE; all: kbsync audit\)$/m,
    );
  });

  it('a sync that was killed has no totals: status says so rather than zeros', () => {
    const text = formatStatus(
      statusReport({
        tracked: [file('a.md', 'processed', 'upload')],
        lastRun: { id: 7, status: 'interrupted', startedAt: 'x', finishedAt: 'y', summary: null },
        credits: { day: 125, month: 125, utcDay: 'd', utcMonth: 'm' },
        caps: { run: 500, day: 2000, month: 20000 },
        outbox: { pending: 0, unknown: 0 },
      }),
    );
    expect(text).toMatch(/^last sync: +#7 interrupted, /m);
    expect(text).toMatch(/^last sync totals: +not recorded: the run did not end \(what it paid is in the credits above\)$/m);
  });

  it('--json: one document whose items, one per tracked file in order, are written in chunks as they are read, once', () => {
    const input = (tracked: Iterable<TrackedFile>) => ({
      tracked,
      lastRun: null,
      credits: { day: 0, month: 0, utcDay: 'd', utcMonth: 'm' },
      caps: { run: 500, day: 2000, month: 20000 },
      outbox: { pending: 0, unknown: 0 },
    });
    const many = Array.from({ length: 1300 }, (_, i) =>
      file(`f${String(i).padStart(4, '0')}.md`, i === 3 ? 'failed' : 'processed', 'upload'),
    );
    let read = 0;
    const counted = function* () {
      for (const f of many) {
        read++;
        yield f;
      }
    };
    const chunks = statusJsonChunks(input(counted()));
    const first = chunks.next();
    expect(first.done).toBe(false);
    expect(read).toBe(0); // the head is written before any item is read
    const text = String(first.value) + [...chunks].join('');
    expect(read).toBe(many.length); // one pass: the counts after the items were tallied as they were read
    const doc = JSON.parse(text) as { items: { path: string; remoteStatus: string }[]; tracked: unknown; summary: unknown };
    expect(Object.keys(doc)).toEqual(['summary', 'items', 'tracked', 'credits', 'outbox', 'lastRun', 'daemon']);
    expect(doc.items.map((i) => i.path)).toEqual(many.map((f) => f.path));
    expect(doc.items[3]).toEqual({
      source: 'docs',
      path: 'f0003.md',
      action: 'upload',
      reason: '',
      credits: 0,
      remoteId: null,
      remoteStatus: 'failed',
      remoteChunks: null,
    });
    expect(doc.tracked).toEqual({
      files: 1300,
      byRemoteStatus: { processed: 1299, failed: 1 },
      deleted: 0,
      chunks: 0,
      failed: { files: 1, first: ['f0003.md'] },
    });
    expect(text.split('\n').filter((l) => l.includes('"path"'))).toHaveLength(many.length); // a line per item

    const empty = JSON.parse([...statusJsonChunks(input([]))].join('')) as { items: unknown[] };
    expect(empty.items).toEqual([]);
  });
});
