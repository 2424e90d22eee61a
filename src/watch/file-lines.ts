import type { Logger } from '../shared/logger.js';
import type { PaidResult } from '../sync/executor/paid-ops.js';
import type { PlanItem, RunItem } from '../sync/types.js';

/** The daemon's file lines: a cycle's, at its end (see createFileLines), and a paid call's, as it settles. */
export type FileLines = ((items: readonly RunItem[], scoped?: boolean) => void) & {
  /** A paid call settled: its line now, not at the cycle's end (which then skips it). A call deferred unsent waits for the end. */
  settled(item: PlanItem, result: PaidResult): void;
};

/**
 * The daemon's `file` log lines: one per file action of a cycle, with its reason. Unchanged files get
 * none, and a file skipped (or found deleted) again for the same reason as in the last cycle gets none either: every cycle
 * plans the whole tree, and a large tree's images and dotfiles would be the same lines at every cycle. A skip is logged again once its reason changes; a file the
 * budget defers, once the cap that holds it back changes. `scoped`: the
 * items are of a cycle that looked at some folders only: the skips it saw are added to those of the
 * cycles before, which it does not replace.
 */
export function createFileLines(logger: Logger): FileLines {
  // A file line holds only the fields named below, each a string, a number or null: pino redacts by field
  // name, so it could censor nothing here, and the line skips its wildcard paths, which cost more than the
  // line on a large tree's first cycle. file-lines.test.ts proves the lines equal a redacting logger's.
  const fileLog = logger.child({}, { redact: { paths: [], censor: '[redacted]' } });
  // `source\0path` → `action\0reason` of the files the last cycle skipped.
  let skippedBefore = new Map<string, string>();
  // `source\0path` of the paid calls of the cycle running whose line was written as they settled.
  const logged = new Set<string>();
  const settled = (item: PlanItem, r: PaidResult): void => {
    if (r.deferred !== undefined) return;
    const { source, path, action, reason } = item;
    logged.add(`${source}\0${path}`);
    // A call that failed says why (the client's message, its secrets redacted).
    if (r.error !== null)
      fileLog.warn({ source, path, action, reason, credits: r.creditsCharged, outcome: r.outcome, error: r.error }, 'file');
    else fileLog.info({ source, path, action, reason, credits: r.creditsCharged, outcome: r.outcome }, 'file');
  };
  const cycle = (items: readonly RunItem[], scoped = false): void => {
    const skipped = scoped ? skippedBefore : new Map<string, string>();
    for (const item of items) {
      if (item.action === 'skip:unchanged') continue;
      const key = `${item.source}\0${item.path}`;
      // A deleted file's row stays tracked (its remote copy is kept): every full cycle reports it again,
      // and one the state recorded before (an earlier daemon, a sync) is no news either.
      // A file the budget holds back is planned again each cycle until its period opens: one line per
      // cap, not per reason, whose figures (credits spent so far) move with every cycle.
      const overBudget = item.action === 'defer:over-budget';
      // A call held for a target that did not answer (not run, with the call's error): once, not at each try.
      const held = item.outcome === 'not-run' && item.error !== null;
      if (item.action.startsWith('skip:') || item.action === 'deleted' || overBudget || held) {
        const why = `${item.action}\0${overBudget ? (item.deferredBy ?? '') : held ? 'held' : item.reason}`;
        const before = skippedBefore.get(key);
        skipped.set(key, why);
        if (before === why || item.deletedBefore === true) continue;
      } else {
        skipped.delete(key);
        if ((item.action === 'upload' || item.action === 'reprocess') && logged.has(key)) continue;
      }
      const { source, path, action, reason, creditsCharged: credits, outcome, error } = item;
      if (error != null) fileLog.warn({ source, path, action, reason, credits, outcome, error }, 'file');
      else fileLog.info({ source, path, action, reason, credits, outcome }, 'file');
    }
    skippedBefore = skipped;
    logged.clear();
  };
  return Object.assign(cycle, { settled });
}
