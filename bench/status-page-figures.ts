import type { Figure } from './figure.js';
import { info } from './figure.js';
import type { StatusPageBenchResult } from './status-page.js';

/** The target: the page's first paint, on the daemon's side, under 200 ms at 10,000 tracked files. */
export const MAX_FIRST_PAINT_MS = 200;

/** Figures of bench/status-page.ts; null (the bench failed) is one figure not measured. */
export function statusPageFigures(r: StatusPageBenchResult | null): Figure[] {
  const group = 'kbsync watch --http: the status page';
  if (r === null)
    return [
      {
        group,
        name: 'first GET /',
        value: null,
        unit: 'ms',
        reference: null,
        ratio: null,
        target: `< ${MAX_FIRST_PAINT_MS} ms`,
        pass: false,
      },
    ];
  const reference = { name: 'the status document alone (kbsync status --json)', value: r.statusMedianMs };
  return [
    {
      group,
      name: `GET / at ${r.files.toLocaleString('en-US')} tracked files, rows read again (the first after each cycle), median of ${r.runs}`,
      value: r.medianMs,
      unit: 'ms',
      reference,
      ratio: r.statusMedianMs === 0 ? null : Math.round((r.medianMs / r.statusMedianMs) * 100) / 100,
      target: `< ${MAX_FIRST_PAINT_MS} ms`,
      pass: r.medianMs < MAX_FIRST_PAINT_MS,
      note: `slowest ${r.maxMs} ms; ${r.htmlBytes.toLocaleString('en-US')} bytes of HTML; request to last byte over loopback`,
    },
    info(group, 'the first GET / of a fresh process (nothing compiled yet)', r.firstMs, 'ms'),
    info(group, `GET / between two cycles (rows already read), median of ${r.runs}`, r.cachedMedianMs, 'ms'),
  ];
}
