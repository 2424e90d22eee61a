import type { Scheduler } from './scheduler.js';
import type { SourceWatch } from './snapshot.js';

/** What the daemon waits for, in words, for `kbsync status`. */
export function waitingFor(
  s: Scheduler,
  watches: readonly SourceWatch[],
  sources: readonly { name: string; git?: { pollSeconds: number } | undefined }[],
  iso: (ms: number) => string,
): string[] {
  const st = s.state();
  const out: string[] = [];
  if (st.running) out.push('a sync cycle in progress');
  if (st.windowOpensAtMs !== null) out.push(`the schedule (watch.schedule) to open at ${iso(st.windowOpensAtMs)}: a sync waits for it`);
  if (st.debouncedAtMs !== null) out.push(`changes to settle: a sync at ${iso(st.debouncedAtMs)}`);
  const watched = watches.filter((w) => w.backend !== 'none');
  if (watched.length > 0) out.push(`changes in ${watched.map((w) => `${w.source} (${w.backend})`).join(', ')}`);
  for (const src of sources) if (src.git !== undefined) out.push(`the git source ${src.name}: fetched every ${src.git.pollSeconds} s`);
  for (const t of st.timed) out.push(timedLine(t, iso));
  if (st.nextRescanAtMs !== null) out.push(`the rescan at ${iso(st.nextRescanAtMs)}`);
  return out;
}

function timedLine(t: { atMs: number; reason: string }, iso: (ms: number) => string): string {
  if (t.reason === 'budget-rollover') return `the budget period to open at ${iso(t.atMs)} (deferred work)`;
  if (t.reason === 'deferred') return `a sync at ${iso(t.atMs)} for the work budget.maxCreditsPerRun deferred`;
  return `a ${t.reason} at ${iso(t.atMs)}`;
}
