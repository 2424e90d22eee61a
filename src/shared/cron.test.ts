import { describe, expect, it } from 'vitest';
import { cronProblem, cronWindow } from './cron.js';

const at = (iso: string): number => Date.parse(iso);

describe('watch.schedule cron windows (UTC)', () => {
  it('opens on the minutes the expression matches, whatever the second', () => {
    const w = cronWindow('0-29 * * * 1-5');
    // 2026-11-26 is a Thursday, 2026-11-28 a Saturday.
    expect(w.isOpen(at('2026-11-26T10:00:00Z'))).toBe(true);
    expect(w.isOpen(at('2026-11-26T10:29:59.999Z'))).toBe(true);
    expect(w.isOpen(at('2026-11-26T10:30:00Z'))).toBe(false);
    expect(w.isOpen(at('2026-11-28T10:05:00Z'))).toBe(false);
  });

  it('gives the start of the next open minute', () => {
    const w = cronWindow('* 22-23,0-5 * * *');
    expect(new Date(w.nextOpenMs(at('2026-11-26T12:34:56Z')) as number).toISOString()).toBe('2026-11-26T22:00:00.000Z');
    expect(new Date(w.nextOpenMs(at('2026-11-26T05:59:30Z')) as number).toISOString()).toBe('2026-11-26T22:00:00.000Z');
    expect(new Date(cronWindow('0-29 * * * 1-5').nextOpenMs(at('2026-11-27T23:45:00Z')) as number).toISOString()).toBe(
      '2026-11-30T00:00:00.000Z',
    );
  });

  it('names what is wrong with an expression', () => {
    expect(cronProblem('* 22-23 * * *')).toBeNull();
    expect(cronProblem('* * *')).toMatch(/5 fields .* got 3 in "\* \* \*"/);
    expect(cronProblem('0 0 30 2 *')).toMatch(/never matches/);
    expect(cronProblem('* 25 * * *')).toMatch(/^not a cron expression: .*hour/);
  });
});
