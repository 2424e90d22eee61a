import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pidAlive } from '../../src/shared/pid-alive.js';

/** The state letter of /proc/PID/stat, or null once the pid is gone. */
function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2);
  } catch {
    return null;
  }
}

describe('pidAlive with real processes', () => {
  it('this process is alive; a zombie (ended, its parent not waiting) is not', async () => {
    expect(pidAlive(process.pid)).toBe(true);
    // The child ends after its parent has exec'd `sleep`, which never reaps it (one that ended at once
    // could be reaped by sh before the exec).
    const parent = spawn('sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()))));
      for (let i = 0; i < 200 && procState(pid) !== 'Z'; i++) await new Promise((r) => setTimeout(r, 25));
      expect(procState(pid)).toBe('Z');
      expect(pidAlive(pid)).toBe(false);
      expect(pidAlive(parent.pid as number)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
