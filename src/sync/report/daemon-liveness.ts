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
      `(a SIGSTOP, a suspended machine, a debugger); it syncs nothing until it runs again (kill -CONT ${d.pid} resumes a stopped one), ` +
      'and what follows is from before'
    );
  return `running (${where}), ${d.ready ? 'ready' : 'first sync not finished'}`;
}
