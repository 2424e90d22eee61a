import { readFileSync } from 'node:fs';

/**
 * True when process `pid` of this host is alive: signal 0 reaches it, or it exists but belongs to
 * another user (EPERM), and it is not a zombie. Only ESRCH says it is gone, or, where /proc tells
 * (Linux), a state of Z or X: a process killed (kill -9) whose parent has not reaped it yet has
 * ended, closed its files and released its locks, but signal 0 still reaches it.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  return !ended(pid);
}

/** True when /proc says `pid` has ended (a zombie, or dead): its state, after the name in parentheses. */
function ended(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    // Gone since the signal; any other failure (no /proc here) leaves the signal's answer.
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  return state === 'Z' || state === 'X';
}
