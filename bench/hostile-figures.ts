import type { Figure } from './figure.js';
import { info } from './figure.js';
import type { HostileIngestResult } from './hostile-ingest.js';

/** The target: queries answered within this (p99) while the service parses the worst input of a type. */
export const MAX_QUERY_P99_DURING_PARSE_MS = 100;
/** The target: a page of 200,000 unclosed tags handled or refused within this. */
export const MAX_UNCLOSED_HTML_MS = 2000;
/** How long after the burst's last file the settled resident size is read. */
export const SETTLE_MS = 10_000;
/** The target: after a burst and SETTLE_MS of quiet, the service's resident size is at most this times its idle size. */
export const MAX_SETTLED_OVER_IDLE_RATIO = 1.5;

/** Rows of docs/benchmarks.md for bench/hostile-ingest.ts. */
export function hostileFigures(r: HostileIngestResult): Figure[] {
  const group = 'local service while it parses the worst input of each type (kbsync serve, child process)';
  const rows: Figure[] = [];
  for (const i of r.inputs) {
    rows.push({
      group,
      name: `query p99 while parsing ${i.format}: ${i.what}`,
      value: i.p99Ms,
      unit: 'ms',
      reference: null,
      ratio: null,
      target: `≤ ${MAX_QUERY_P99_DURING_PARSE_MS} ms`,
      pass: i.p99Ms <= MAX_QUERY_P99_DURING_PARSE_MS,
      note: `${i.queries} queries, max ${i.maxMs} ms; the file settled in ${i.settleMs} ms: ${i.outcome}`,
    });
    if (i.format === 'html' && i.what.includes('unclosed')) {
      rows.push({
        group,
        name: `html: ${i.what}, upload to settled`,
        value: i.settleMs,
        unit: 'ms',
        reference: null,
        ratio: null,
        target: `< ${MAX_UNCLOSED_HTML_MS} ms`,
        pass: i.settleMs < MAX_UNCLOSED_HTML_MS,
        note: i.outcome,
      });
    }
  }
  const idle = { name: 'the same service idle, before the burst', value: r.rss.idleMb };
  rows.push(info(group, `RSS, peak during a burst of ${r.rss.files} files of every type`, r.rss.burstMb, 'MB', undefined, idle));
  rows.push(info(group, `a burst of ${r.rss.files} files of every type, first upload to all settled`, r.rss.burstMs, 'ms'));
  rows.push({
    group,
    name: `RSS ${SETTLE_MS / 1000} s after the burst settled`,
    value: r.rss.settledMb,
    unit: 'MB',
    reference: idle,
    ratio: idle.value === 0 ? null : Math.round((r.rss.settledMb / idle.value) * 100) / 100,
    target: `≤ ${MAX_SETTLED_OVER_IDLE_RATIO} × reference`,
    pass: idle.value > 0 && r.rss.settledMb <= r.rss.idleMb * MAX_SETTLED_OVER_IDLE_RATIO,
  });
  return rows;
}
