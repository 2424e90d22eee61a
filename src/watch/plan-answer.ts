import { performance } from 'node:perf_hooks';
import { isIntelligenceSource } from '../config/source-kinds.js';
import type { Logger } from '../shared/logger.js';
import { capsOf, preparePlan, type DeltaPass, type SyncDeps } from '../sync/executor/prepare.js';
import type { TrackedIndex } from '../sync/tracked/tracked-index.js';
import type { Burst } from './burst.js';
import { PlanBaseline, type BaselineFindings } from './plan-baseline.js';
import { PLAN_PROTOCOL, type PlanReply, type PlanRequest } from './plan-socket.js';

/** What the daemon's cycles and its plan answers tell each other. */
export type PlanGate = {
  /** Bumped by each file-system event and at the start and end of each cycle: an answer made in another generation is stale. */
  generation: number;
  /** True while a cycle runs: it writes the state and the kept index. */
  cycling: boolean;
  /** The plan being made: a cycle waits for it before it starts. */
  computing: Promise<unknown> | null;
  /**
   * Every event's path since the last whole walk of a plan answer (the daemon's burst adds each here
   * too), and the paths of the kept index's rows written since: the folders the next answer walks.
   */
  changes: Burst;
};

export function createPlanGate(changes: Burst): PlanGate {
  return { generation: 0, cycling: false, computing: null, changes };
}

/** Runs a cycle once no plan is being made, with the gate saying so (the scheduler's runCycle). */
export async function cycleAlone(gate: PlanGate, cycle: () => Promise<void>): Promise<void> {
  while (gate.computing !== null) await gate.computing;
  gate.cycling = true;
  gate.generation++;
  try {
    await cycle();
  } finally {
    gate.cycling = false;
    gate.generation++;
  }
}

type Answer = { totals: { failed: number; deferred: number }; notes: string[]; out: string };

/**
 * The daemon's answer to `kbsync plan`: a real plan, made as a fresh `kbsync plan` makes it, but over
 * the tracked index the daemon keeps in memory instead of the state's rows. The walk is whole, so a
 * change whose events are still being debounced is in it. For the text report of one folder source,
 * a delta plan (unchanged files counted, as a cycle does), kept as text until the next event, cycle
 * or budget change while every folder is watched by events: a plan asked again of an unchanged tree
 * is answered from memory. While every folder is watched by events, the next delta plans walk only
 * the folders changed since the last whole walk (an event there, or a row of theirs written) and take
 * the rest from it (PlanBaseline). Nothing is paid or written; while a cycle runs, or repairs wait
 * for the next one, the daemon says why and the asker reads the state itself.
 */
export function createPlanAnswerer(o: {
  deps: SyncDeps;
  gate: PlanGate;
  keptIndex: () => Promise<TrackedIndex | null>;
  /** False while a folder is polled or not watched: its changes come late or never, so no answer is kept. */
  eventsSeeAll: () => boolean;
  logger: Pick<Logger, 'info'>;
}): (req: PlanRequest) => Promise<PlanReply> {
  const { deps, gate } = o;
  const { state } = deps;
  // Sources are this generation's (a reload that changes them makes a new one); the caps are read
  // from deps.config at each answer, which a reload of the budget swaps in place.
  const { sources } = deps.config;
  const fileSources = sources.filter((s) => !isIntelligenceSource(s));
  // A delta plan's text is the full plan's when its paths need no source (one source) and every
  // change comes with an event (no git source, which is polled).
  const deltaText = fileSources.length === 1 && sources.every((s) => s.git === undefined);
  let cached: (Answer & { key: string }) | null = null;
  // The last whole delta plan's findings, while nothing says they may be stale.
  let baseline: PlanBaseline | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const refusal = (reason: string): PlanReply => ({ v: PLAN_PROTOCOL, ok: false, pid: process.pid, reason });
  const why = (): string | null => {
    if (gate.cycling) return 'a sync cycle is running';
    if (state.remoteCheckPending() || state.openOpCounts().unknown > 0)
      return 'the state has repairs to make first (its next cycle makes them)';
    return null;
  };

  const make = async (req: PlanRequest, started: number): Promise<PlanReply> => {
    const delta = deltaText && !req.json && !req.all;
    const key = delta && o.eventsSeeAll() ? `${gate.generation} ${JSON.stringify(state.budgetWindow(capsOf(deps.config), null))}` : null;
    let from: 'memory' | 'walk' | 'scope' = 'memory';
    let answer: Answer | null = key !== null && cached?.key === key ? cached : null;
    if (answer === null) {
      const tracked = await o.keptIndex();
      const notNow = tracked === null ? 'the tracked index is not in memory yet' : why();
      if (notNow !== null) return refusal(notNow);
      const index = tracked as TrackedIndex;
      // A baseline holds while events see every change (a polled folder's come late) over the same index.
      if (baseline !== null && (!o.eventsSeeAll() || baseline.tracked !== index)) baseline = null;
      const scope = delta && baseline !== null ? gate.changes.peek() : null;
      if (scope !== null && baseline !== null) {
        from = 'scope';
        const kept = baseline;
        answer = (await render(deps, index, req, { scope, beside: (t) => kept.beside(scope, t) })).answer;
      } else {
        from = 'walk';
        // Events from here on are changes since this walk (a delta one: the others list every file, keep nothing).
        if (delta) {
          gate.changes.take();
          baseline = null;
        }
        const made = await render(deps, index, req, delta ? { scope: null } : null);
        answer = made.answer;
        if (made.found !== null && o.eventsSeeAll()) {
          baseline = new PlanBaseline(index, made.found);
          index.onPut = (source, path) => gate.changes.carry(source, path);
        }
      }
      if (key !== null) cached = { ...answer, key };
    }
    const tookMs = Math.round((performance.now() - started) * 10) / 10;
    o.logger.info({ from, tookMs, json: req.json, all: req.all }, 'plan answered');
    return { v: PLAN_PROTOCOL, ok: true, pid: process.pid, from, tookMs, ...answer };
  };

  return (req) => {
    const started = performance.now();
    const notNow = why();
    if (notNow !== null) return Promise.resolve(refusal(notNow));
    // One plan at a time, and a cycle waits for it (gate.computing).
    const work = queue.then(() => (gate.cycling ? refusal('a sync cycle is running') : make(req, started)));
    queue = work.catch(() => {});
    gate.computing = queue;
    void queue.then(() => {
      if (gate.computing === queue) gate.computing = null;
    });
    return work;
  };
}

/**
 * The plan as `kbsync plan` prints it: notes for stderr, the report for stdout. `delta`: a delta plan,
 * of these folders only (null: every source) with what lies beside them; null: a plan listing every
 * file. `found`: what a whole delta plan found, for a baseline.
 */
async function render(
  deps: SyncDeps,
  tracked: TrackedIndex,
  req: PlanRequest,
  delta: Pick<DeltaPass, 'scope' | 'beside'> | null,
): Promise<{ answer: Answer; found: BaselineFindings | null }> {
  const { plan, notes, observation, wholeDelta } = await preparePlan(
    deps,
    null,
    delta !== null ? { delta: { tracked, ...delta } } : { tracked },
  );
  const found =
    delta?.scope === null && wholeDelta !== null ? { files: observation.files, skipped: observation.skipped, ...wholeDelta } : null;
  let out: string;
  if (req.json) {
    const { jsonReportChunks } = await import('../sync/report/json-report.js');
    out = [...jsonReportChunks(plan)].join('');
  } else {
    const { formatPlan } = await import('../sync/report/index.js');
    out = `${formatPlan(plan, { showUnchanged: req.all })}\n`;
  }
  return { answer: { totals: { failed: plan.totals.failed, deferred: plan.totals.deferred }, notes, out }, found };
}
