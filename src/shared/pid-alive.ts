/**
 * True when process `pid` of this host is alive: signal 0 reaches it, or it exists but belongs to
 * another user (EPERM). Only ESRCH says it is gone.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
