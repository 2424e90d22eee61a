import { info, type Figure } from './figure.js';
import type { PgStateBenchResult } from './pg-state.js';

const ratio = (a: number, b: number): number | null => (b === 0 ? null : Math.round((a / b) * 100) / 100);

/** The PostgreSQL state's figures (bench/pg-state.ts), each beside the SQLite state's. */
export function pgStateFigures(r: PgStateBenchResult | null): Figure[] {
  const group = 'PostgreSQL state beside the SQLite state (bench/pg-state.ts)';
  if (r === null)
    return [
      { group, name: 'PostgreSQL state figures', value: null, unit: 'ms', reference: null, ratio: null, target: 'measured', pass: false },
    ];
  const planRatio = ratio(r.plan.postgresMs, r.plan.sqliteMs);
  return [
    {
      group,
      name: `unchanged plan of ${r.files} tracked files (load + planner), PostgreSQL state`,
      value: r.plan.postgresMs,
      unit: 'ms',
      reference: { name: 'the same with the SQLite state', value: r.plan.sqliteMs },
      ratio: planRatio,
      target: '≤ 2x the SQLite state',
      pass: planRatio !== null && planRatio <= 2,
    },
    info(group, 'loading the tracked files, PostgreSQL state', r.plan.postgresLoadMs, 'ms', undefined, {
      name: 'SQLite state',
      value: r.plan.sqliteLoadMs,
    }),
    info(
      group,
      'one state call (getMeta), PostgreSQL state',
      r.call.postgresUs,
      'µs',
      'the worker-thread hop and a round trip to the server',
      {
        name: 'SQLite state',
        value: r.call.sqliteUs,
      },
    ),
    info(
      group,
      `reservations per second (enqueue, reserve, settle), ${r.reservations.postgresProcesses} processes on one PostgreSQL state`,
      r.reservations.postgresPerSec,
      '/s',
      `${r.reservations.seconds} s each; durable commits on both (fsync on)`,
      { name: 'SQLite state, 1 process', value: r.reservations.sqlitePerSec },
    ),
  ];
}
