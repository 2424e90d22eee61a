import type { Series } from './cli-runner.js';
import type { Figure } from './figure.js';
import { ratio } from './measure.js';
import type { ServiceStartResult } from './service-start.js';

const GROUP = 'local service start, real CLI, fresh process';
/** The target: `kbsync serve` on an existing data folder prints `listening` within this many times `node -e 0`'s time, same run. */
export const SERVE_START_MAX_TIMES_NODE = 3;

/** The rows of docs/benchmarks.md for the service's start. */
export function serviceStartFigures(r: ServiceStartResult): Figure[] {
  const node = r.nodeStart;
  const row = (s: Series, target: string | null, meets: (ms: number, nodeMs: number) => boolean, extra?: string): Figure => ({
    group: GROUP,
    name: s.name,
    value: s.medianMs,
    unit: 'ms',
    reference: { name: node.name, value: node.medianMs },
    ratio: ratio(s.medianMs, node.medianMs),
    target,
    pass: target === null ? null : s.medianMs === null || node.medianMs === null ? false : meets(s.medianMs, node.medianMs),
    note: [s.problem, extra, `runs: ${s.runsMs.join(', ')} ms`, `node -e 0 runs: ${node.runsMs.join(', ')} ms`]
      .filter((x): x is string => x !== null && x !== undefined)
      .join('; '),
  });
  return [
    row(
      r.serveExisting,
      `≤ ${SERVE_START_MAX_TIMES_NODE} × reference`,
      (ms, nodeMs) => ms <= nodeMs * SERVE_START_MAX_TIMES_NODE,
      'every `npm run example`, local sync and service test pays it',
    ),
    row(
      r.serveNew,
      null,
      () => true,
      'creates service.db (schema in one transaction) before listening; the dataset and key are made after',
    ),
    row(
      r.firstPlan,
      null,
      () => true,
      'config, a new state, the client, the embedded service on a new data folder, listing its empty dataset',
    ),
  ];
}
