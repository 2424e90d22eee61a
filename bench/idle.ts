import { readdirSync, readFileSync } from 'node:fs';

/** What an idle process did over a window: its wake-ups (context switches of every thread) and its CPU time. */
export type IdleSample = {
  windowMs: number;
  wakeupsPerS: number;
  /** CPU time (user + system) over the window, as a share of one core. */
  cpuPercent: number;
  /** Wake-ups per second by thread name (the threads that woke at all), most first. */
  byThread: [string, number][];
};

/** The context switches of each thread of `pid` (voluntary + not), by thread id. */
function switches(pid: number): Map<string, { name: string; n: number }> {
  const out = new Map<string, { name: string; n: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const name = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '?';
      const n = [...status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
      out.set(tid, { name, n });
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return out;
}

/** utime + stime of `pid`, in clock ticks. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Samples `pid` over `windowMs` while nothing is asked of it (Linux only: /proc). */
export async function measureIdle(pid: number, windowMs: number): Promise<IdleSample> {
  const before = switches(pid);
  const cpu0 = cpuTicks(pid);
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, windowMs));
  const after = switches(pid);
  const cpu1 = cpuTicks(pid);
  const seconds = (Date.now() - t0) / 1000;
  const byName = new Map<string, number>();
  let total = 0;
  for (const [tid, a] of after) {
    const d = a.n - (before.get(tid)?.n ?? 0);
    if (d <= 0) continue;
    total += d;
    byName.set(a.name, (byName.get(a.name) ?? 0) + d);
  }
  // Clock ticks are 1/100 s on Linux (USER_HZ).
  return {
    windowMs: Math.round(seconds * 1000),
    wakeupsPerS: Math.round((total / seconds) * 10) / 10,
    cpuPercent: Math.round(((cpu1 - cpu0) / 100 / seconds) * 1000) / 10,
    byThread: [...byName].map(([name, n]) => [name, Math.round((n / seconds) * 10) / 10] as [string, number]).sort((a, b) => b[1] - a[1]),
  };
}
