import type { Series } from './cli-runner.js';
import type { DaemonPlanResult } from './daemon-plan.js';
import { check, info, type Figure } from './figure.js';
import { ratio } from './measure.js';

/** Issue 25's target: a plan answered by the daemon costs at most this times the plan of an empty folder. */
export const DAEMON_PLAN_MAX_RATIO = 1.5;

/** The rows of docs/benchmarks.md for `kbsync plan` beside a running `kbsync watch`. */
export function daemonPlanFigures(r: DaemonPlanResult | null): Figure[] {
  const group = `kbsync plan beside a running kbsync watch, ${r?.files ?? '?'} files, state seeded as synced`;
  if (r === null)
    return [{ ...check(group, 'daemon-answered plan figures', null, 'the benchmark process failed'), target: 'measured', pass: false }];
  const empty = r.emptyPlan.medianMs;
  const runs = (s: Series): string => `${s.problem === null ? '' : `${s.problem}; `}runs: ${s.runsMs.join(', ')} ms`;
  const daemonRatio = ratio(r.daemonPlan.medianMs, empty);
  return [
    {
      group,
      name: r.daemonPlan.name,
      value: r.daemonPlan.medianMs,
      unit: 'ms',
      reference: { name: r.emptyPlan.name, value: empty },
      ratio: daemonRatio,
      target: `≤ ${DAEMON_PLAN_MAX_RATIO}x the reference`,
      pass: daemonRatio === null ? null : daemonRatio <= DAEMON_PLAN_MAX_RATIO,
      note: `${runs(r.daemonPlan)}; the daemon's own time per answer from memory (median): ${r.daemonTookMs.memory ?? '?'} ms`,
    },
    info(group, r.freshPlan.name, r.freshPlan.medianMs, 'ms', runs(r.freshPlan), { name: r.emptyPlan.name, value: empty }),
    info(
      group,
      r.daemonPlanAfterChange.name,
      r.daemonPlanAfterChange.medianMs,
      'ms',
      `${runs(r.daemonPlanAfterChange)}; the daemon's own time per answer after a walk (median): ${r.daemonTookMs.walk ?? '?'} ms`,
      { name: r.emptyPlan.name, value: empty },
    ),
    info(group, r.emptyPlan.name, empty, 'ms', runs(r.emptyPlan)),
    check(group, "the daemon's answer is the fresh plan's report, byte for byte", r.sameReport, 'one untimed pair, text report'),
  ];
}
