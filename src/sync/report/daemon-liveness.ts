import type { DaemonStatus } from './status.js';

/**
 * The `daemon:` line of `status`: running and ready (or not yet), or, when its heartbeat is stale, not
 * answering for N s: what follows in the status is from before it stopped answering.
 */
export function daemonStateText(d: DaemonStatus): string {
  const where = `pid ${d.pid}, since ${d.startedAt}${d.http === null ? '' : `, http ${d.http}`}`;
  const beat = d.heartbeat;
  if (beat !== undefined && !beat.answering)
    return (
      `not answering for ${beat.silentSeconds} s (${where}; last heartbeat ${beat.at}): stopped or hung ` +
      `(a SIGSTOP, a suspended machine, a debugger), or unable to write its status file (a full disk: see its log); ` +
      `a stopped one syncs nothing until it runs again (kill -CONT ${d.pid} resumes it), and what follows is from before`
    );
  if (!d.ready) return `running (${where}), first sync not finished`;
  if (d.target != null && !d.target.reachable) return `running (${where}), waiting for the target to answer`;
  if (d.lastError != null && (d.lastSuccessAt == null || d.lastError.at > d.lastSuccessAt))
    return `running (${where}), its last sync failed (tried again soon)`;
  return `running (${where}), ready`;
}
