import { preparePlan, type SyncDeps } from '../sync/executor/prepare.js';
import { explainItem, findEnclosingSkips, findItems } from '../sync/report/explain.js';
import type { TrackedIndex } from '../sync/tracked/tracked-index.js';
import { printable } from '../shared/printable.js';
import type { PlanGate } from './plan-answer.js';

/** `kbsync explain`'s answer for one path, made by the daemon: `found` false when the path is in no source. */
export type ExplainAnswer = { path: string; found: boolean; text: string };

/**
 * Explains a path as `kbsync explain PATH` does, from a plan made over the tracked index the daemon keeps
 * (nothing paid or written). It waits for a cycle running to end, and a cycle waits for it (the plan gate).
 */
export function createExplainer(o: {
  deps: SyncDeps;
  gate: PlanGate;
  keptIndex: () => Promise<TrackedIndex | null>;
  /** Settles when the cycle running (if any) has ended. */
  cycleEnded: () => Promise<void>;
}): (path: string) => Promise<ExplainAnswer> {
  const { gate } = o;
  const explain = async (path: string): Promise<ExplainAnswer> => {
    const tracked = await o.keptIndex();
    if (tracked === null)
      return { path, found: false, text: 'the daemon has not read its tracked files yet: ask again after its first sync' };
    const { plan } = await preparePlan(o.deps, null, { tracked });
    const exact = findItems(plan, path);
    const items = exact.length > 0 ? exact : findEnclosingSkips(plan, path);
    if (items.length === 0)
      return {
        path,
        found: false,
        text: `${printable(path)} is not in any source (neither found nor tracked); paths are as the plan prints them (source-relative, or source/path)`,
      };
    const text = items.map((item) => explainItem(item, o.deps.state.getTracked(item.source, item.path) ?? undefined, plan)).join('\n\n');
    return {
      path,
      found: true,
      text:
        exact.length > 0
          ? text
          : `${printable(path)} is inside a folder that is skipped as a whole (its files are not looked at):\n\n${text}`,
    };
  };
  return async (path) => {
    for (;;) {
      if (gate.cycling) await o.cycleEnded();
      else if (gate.computing !== null) await gate.computing;
      else break;
    }
    const work = explain(path);
    const done = work.then(
      () => {},
      () => {},
    );
    gate.computing = done;
    void done.then(() => {
      if (gate.computing === done) gate.computing = null;
    });
    return work;
  };
}
