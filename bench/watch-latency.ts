import Database from 'better-sqlite3';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/** One `sync cycle done` line of the daemon's log: why it ran, and how long its sync took (the daemon's own clock). */
export type CycleLine = { reasons: string[]; tookMs: number; uploaded: number; unchanged: number };

/** The daemon's `sync cycle done` lines so far, in order. */
export function cycleLines(stderr: string): CycleLine[] {
  const out: CycleLine[] = [];
  for (const line of stderr.split('\n')) {
    // Polled every 20-100 ms over a log that holds a line per file of the first sync (~18k at 100k
    // files): only the cycle lines are parsed, so that the polling does not take a core from the daemon.
    if (!line.startsWith('{') || !line.includes('"sync cycle done"')) continue;
    try {
      const l = JSON.parse(line) as { msg?: string } & Partial<CycleLine>;
      if (l.msg === 'sync cycle done')
        out.push({ reasons: l.reasons ?? [], tookMs: l.tookMs ?? NaN, uploaded: l.uploaded ?? 0, unchanged: l.unchanged ?? 0 });
    } catch {
      // A line cut by the pipe's chunking: it is whole in a later read.
    }
  }
  return out;
}

/** One change: its file written, then its op in the outbox. */
export type ChangeSample = {
  /** From the write to the op's `created_at` (the daemon's Date.now() at the INSERT). */
  enqueueMs: number;
  /** From the write to this process seeing the row (polled every 1 ms): an upper bound of enqueueMs. */
  seenMs: number;
  /** The `sync cycle done` tookMs of the cycle that enqueued it. */
  cycleMs: number | null;
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const nowEpochMs = (): number => performance.timeOrigin + performance.now();

/**
 * Writes `count` new files, one at a time, at the root of the watched tree (a folder the daemon already
 * watches) and times each from the write to its op in the outbox, read from the state read-only
 * (`statePath`, WAL: the daemon's commits are visible at once). An op stays in the outbox until its run
 * has ended (done ops are pruned then), so a 1 ms poll does not miss it. Each next file is written once
 * the cycle of the last has been logged as done. The files are removed at the end (after the daemon is
 * stopped, by the caller calling `cleanup`).
 */
export async function measureChanges(o: {
  treeDir: string;
  statePath: string;
  count: number;
  stderr: () => string;
  alive: () => boolean;
}): Promise<{ samples: ChangeSample[]; problem: string | null; cleanup: () => void }> {
  const db = new Database(o.statePath, { readonly: true, fileMustExist: true });
  const written: string[] = [];
  const cleanup = (): void => {
    for (const f of written) rmSync(f, { force: true });
  };
  const samples: ChangeSample[] = [];
  try {
    const opOf = db.prepare<[string], number>(`SELECT created_at FROM outbox WHERE path = ? ORDER BY id LIMIT 1`).pluck();
    for (let i = 0; i < o.count; i++) {
      const name = `kbsync-watch-bench-${process.pid}-${i}.txt`;
      const abs = join(o.treeDir, name);
      const cyclesBefore = cycleLines(o.stderr()).length;
      written.push(abs);
      const writtenAt = nowEpochMs();
      writeFileSync(abs, `change ${i} at ${new Date().toISOString()}\n`);
      let createdAt: number | undefined;
      const deadline = Date.now() + 60_000;
      while ((createdAt = opOf.get(name)) === undefined) {
        if (!o.alive()) return { samples, problem: 'kbsync watch exited during the change test', cleanup };
        if (Date.now() > deadline) return { samples, problem: `no outbox op for ${name} within 60 s`, cleanup };
        await sleep(1);
      }
      const seenMs = nowEpochMs() - writtenAt;
      // Wait for that cycle to end, so that each change is timed from an idle daemon.
      let cycle: CycleLine | undefined;
      while (
        (cycle = cycleLines(o.stderr())
          .slice(cyclesBefore)
          .find((c) => c.reasons.includes('changes'))) === undefined
      ) {
        if (!o.alive() || Date.now() > deadline) return { samples, problem: `the cycle of ${name} never ended`, cleanup };
        await sleep(20);
      }
      samples.push({
        enqueueMs: Math.round((createdAt - writtenAt) * 10) / 10,
        seenMs: Math.round(seenMs * 10) / 10,
        cycleMs: cycle.tookMs,
      });
      await sleep(300);
    }
    return { samples, problem: null, cleanup };
  } finally {
    db.close();
  }
}

/**
 * Waits for `count` cycles run by the rescan timer alone (watch.rescanMinutes, no change) and returns
 * each one's tookMs: a full sync of the unchanged tree (walk, compare with the state, plan, no upload).
 */
export async function measureRescans(o: {
  count: number;
  rescanMs: number;
  stderr: () => string;
  alive: () => boolean;
}): Promise<{ tookMs: number[]; problem: string | null }> {
  const before = cycleLines(o.stderr()).length;
  const deadline = Date.now() + o.count * (o.rescanMs + 30_000);
  for (;;) {
    const rescans = cycleLines(o.stderr())
      .slice(before)
      .filter((c) => c.reasons.length === 1 && c.reasons[0] === 'rescan');
    if (rescans.some((c) => c.uploaded > 0)) return { tookMs: [], problem: 'a rescan of the unchanged tree uploaded files' };
    if (rescans.length >= o.count) return { tookMs: rescans.slice(0, o.count).map((c) => c.tookMs), problem: null };
    if (!o.alive()) return { tookMs: rescans.map((c) => c.tookMs), problem: 'kbsync watch exited while waiting for rescans' };
    if (Date.now() > deadline) return { tookMs: rescans.map((c) => c.tookMs), problem: `only ${rescans.length} rescan(s) in time` };
    await sleep(100);
  }
}
