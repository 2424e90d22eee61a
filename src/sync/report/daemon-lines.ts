import { formatCount as n, plural } from '../planner/format.js';
import { fields } from './columns.js';
import { daemonStateText } from './daemon-liveness.js';
import type { DaemonStatus } from './status.js';

/** A running daemon alone, for people: what `status` shows of it when the config does not load. */
export function formatDaemonStatus(d: DaemonStatus): string {
  return fields(daemonLines(d), '').join('\n');
}

export function daemonLines(d: DaemonStatus | null): [string, string][] {
  if (d === null) return [];
  const last = d.lastSync;
  return [
    ['daemon', daemonStateText(d)],
    [
      'watching',
      d.watches.length === 0
        ? 'no folder'
        : d.watches.map((w) => `${w.source} (${w.backend}${w.note === null ? '' : `: ${w.note}`})`).join('; '),
    ],
    [
      'daemon last sync',
      last === null
        ? 'none yet'
        : `${last.at} (${last.reasons.join(', ')}): ${n(last.uploaded)} uploaded, ${n(last.deferred)} deferred, ${n(last.failed)} failed; ${n(last.creditsSpent)} credits spent`,
    ],
    ...cycleLines(d.cycle ?? null),
    ...targetLines(d.target ?? null),
    ...(d.balance == null
      ? []
      : [['balance', `${n(d.balance.credits)} credits, as the service said at ${d.balance.at}`] as [string, string]]),
    ...(d.lastError === null ? [] : [['daemon last error', `${d.lastError.at}: ${d.lastError.message}`] as [string, string]]),
    ...(d.remote == null
      ? []
      : [
          [
            'remote processing',
            `${plural(d.remote.processing, 'copy', 'copies')} queued or processing; the daemon lists them again at ${d.remote.nextListingAt}`,
          ] as [string, string],
        ]),
    ...reloadLines(d.config?.last ?? null),
    ['waiting for', d.waitingFor.length === 0 ? 'nothing' : d.waitingFor.join('; ')],
  ];
}

/** The daemon's cycle running now: why, its paid calls done of planned, credits so far, its end at the rate limit. */
function cycleLines(c: NonNullable<DaemonStatus['cycle']> | null): [string, string][] {
  if (c === null) return [];
  const calls = c.total === 0 ? 'planning' : `${n(c.done)} of ${n(c.total)} paid calls done`;
  const eta = c.etaAt === null ? '' : `; ends about ${c.etaAt} at upload.requestsPerSecond`;
  return [['daemon syncing', `since ${c.startedAt} (${c.reasons.join(', ')}): ${calls}, ${n(c.creditsSoFar)} credits so far${eta}`]];
}

/** The target while it does not answer: since when, why, what waits for it and when it is tried again. */
function targetLines(t: NonNullable<DaemonStatus['target']> | null): [string, string][] {
  if (t === null || t.reachable) return [];
  const since = t.unreachableSince === null ? '' : ` since ${t.unreachableSince}`;
  const why = t.lastError === null ? '' : ` (${t.lastError})`;
  const next = t.nextProbeAt === null ? 'a sync is trying it now' : `tried again at ${t.nextProbeAt}`;
  return [
    [
      'target',
      `unreachable${since}${why}; ${plural(t.changesWaiting, 'change')} ${t.changesWaiting === 1 ? 'waits' : 'wait'} for it; ${next}`,
    ],
  ];
}

/** The daemon's last config reload: what it applied, or why it runs on its previous config. */
function reloadLines(last: NonNullable<DaemonStatus['config']>['last']): [string, string][] {
  if (last === null) return [];
  const what =
    last.outcome === 'applied'
      ? `applied: ${last.changed.join('; ')}`
      : last.outcome === 'unchanged'
        ? 'nothing changed'
        : `${last.outcome === 'refused' ? 'refused' : 'failed'}, running on the previous config: ${last.errors.join('; ')}`;
  return [['daemon config reload', `${last.at} (${last.trigger}): ${what}`]];
}
