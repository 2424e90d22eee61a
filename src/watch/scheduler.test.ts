import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cronWindow } from '../shared/cron.js';
import { createScheduler, type CycleReason } from './scheduler.js';

/** A scheduler whose cycles are recorded and end when the test says (`finish`), or at once. */
function harness(o: { debounceMs?: number; rescanMs?: number; manual?: boolean } = {}) {
  const cycles: CycleReason[][] = [];
  const ends: (() => void)[] = [];
  const errors: unknown[] = [];
  const scheduler = createScheduler({
    debounceMs: o.debounceMs ?? 1000,
    rescanMs: o.rescanMs ?? 60_000,
    runCycle: (reasons) => {
      cycles.push([...reasons]);
      if (o.manual !== true) return Promise.resolve();
      return new Promise<void>((resolve) => ends.push(resolve));
    },
    onCycleError: (err) => errors.push(err),
  });
  const finish = async (): Promise<void> => {
    ends.shift()?.();
    await vi.advanceTimersByTimeAsync(0);
  };
  return { scheduler, cycles, errors, finish };
}

describe('the watch scheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('turns a burst of hints into one cycle, debounceMs after the last one', async () => {
    const { scheduler, cycles } = harness({ debounceMs: 1000 });
    for (let i = 0; i < 1000; i++) {
      scheduler.hint('changes');
      await vi.advanceTimersByTimeAsync(i % 100 === 0 ? 900 : 1);
    }
    expect(cycles).toEqual([]);
    // The last hint was 1 ms ago.
    await vi.advanceTimersByTimeAsync(998);
    expect(cycles).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(cycles).toEqual([['changes']]);
    await scheduler.stop();
  });

  it('counts debounceMs from when the change settled (its ctime), not from the hint that arrives later', async () => {
    const { scheduler, cycles } = harness({ debounceMs: 1500 });
    // The watcher delivers the event 80 ms after the write: the cycle still starts 1500 ms after the write.
    const writtenAt = Date.now();
    await vi.advanceTimersByTimeAsync(80);
    scheduler.hint('changes', writtenAt);
    expect(scheduler.state().debouncedAtMs).toBe(writtenAt + 1500);
    await vi.advanceTimersByTimeAsync(1419);
    expect(cycles).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(cycles).toEqual([['changes']]);
    // A settle time ahead of the clock (a network mount's) counts as now: the cycle is not held back.
    const now = Date.now();
    scheduler.hint('changes', now + 60_000);
    expect(scheduler.state().debouncedAtMs).toBe(now + 1500);
    await scheduler.stop();
  });

  it('a storm of late events (each 50 ms after its write) gives one cycle, debounceMs after the last write', async () => {
    const { scheduler, cycles } = harness({ debounceMs: 1500 });
    let lastWrite = 0;
    for (let t = 0; t < 5_000; t += 200) {
      lastWrite = Date.now();
      await vi.advanceTimersByTimeAsync(50);
      scheduler.hint('changes', lastWrite);
      await vi.advanceTimersByTimeAsync(150);
    }
    expect(cycles).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(lastWrite + 1500 - Date.now() - 1);
    expect(cycles).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(cycles).toHaveLength(1);
    await scheduler.stop();
  });

  it('an autosave storm (a write every 200 ms for 10 s) gives one cycle after it settles', async () => {
    const { scheduler, cycles } = harness({ debounceMs: 1500 });
    for (let t = 0; t < 10_000; t += 200) {
      scheduler.hint('changes');
      await vi.advanceTimersByTimeAsync(200);
    }
    expect(cycles).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1500);
    expect(cycles).toHaveLength(1);
    await scheduler.stop();
  });

  it('runs one cycle at a time: hints during a cycle arm one more, after it', async () => {
    const { scheduler, cycles, finish } = harness({ debounceMs: 100, manual: true });
    scheduler.soon('start');
    expect(cycles).toEqual([['start']]);
    scheduler.hint('changes');
    scheduler.hint('changes');
    await vi.advanceTimersByTimeAsync(5000);
    expect(cycles).toHaveLength(1);
    await finish();
    await vi.advanceTimersByTimeAsync(100);
    expect(cycles).toEqual([['start'], ['changes']]);
    await finish();
    await scheduler.stop();
  });

  it('rescans rescanMs after the last cycle however quiet the watcher is (a missed event is found)', async () => {
    const { scheduler, cycles } = harness({ rescanMs: 60_000 });
    scheduler.soon('start');
    await vi.advanceTimersByTimeAsync(59_999);
    expect(cycles).toEqual([['start']]);
    await vi.advanceTimersByTimeAsync(1);
    expect(cycles).toEqual([['start'], ['rescan']]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(cycles).toHaveLength(3);
    await scheduler.stop();
  });

  it('starts a timed cycle at its time, even one further away than setTimeout holds (a month rollover)', async () => {
    const { scheduler, cycles } = harness({ rescanMs: 1e12 });
    const at = Date.now() + 31 * 24 * 3600_000;
    scheduler.at(at, 'budget-rollover');
    expect(scheduler.state().timed).toEqual([{ atMs: at, reason: 'budget-rollover' }]);
    await vi.advanceTimersByTimeAsync(31 * 24 * 3600_000 - 1);
    expect(cycles).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(cycles).toEqual([['budget-rollover']]);
    await scheduler.stop();
  });

  it('goes on after a failed cycle, and stop() waits for the cycle running and starts no other', async () => {
    let fail = true;
    const errors: unknown[] = [];
    const reasons: CycleReason[][] = [];
    let end: (() => void) | undefined;
    const scheduler = createScheduler({
      debounceMs: 10,
      rescanMs: 1000,
      runCycle: (r) => {
        reasons.push([...r]);
        if (fail) return Promise.reject(new Error('service down'));
        return new Promise<void>((resolve) => (end = resolve));
      },
      onCycleError: (err) => errors.push(err),
    });
    scheduler.soon('start');
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
    fail = false;
    scheduler.hint('changes');
    await vi.advanceTimersByTimeAsync(10);
    expect(reasons).toEqual([['start'], ['changes']]);
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    scheduler.hint('changes');
    await vi.advanceTimersByTimeAsync(5000);
    expect(stopped).toBe(false);
    end?.();
    await stopping;
    await vi.advanceTimersByTimeAsync(5000);
    expect(reasons).toHaveLength(2);
  });
  it('with watch.schedule, runs cycles only in the window: what falls due outside it waits for the next open minute', async () => {
    vi.setSystemTime(Date.parse('2026-11-26T20:00:00Z'));
    const cycles: { at: string; reasons: CycleReason[] }[] = [];
    const scheduler = createScheduler({
      debounceMs: 1000,
      rescanMs: 3600_000,
      window: cronWindow('* 22-23 * * *'),
      runCycle: (reasons) => {
        cycles.push({ at: new Date().toISOString(), reasons: [...reasons] });
        return Promise.resolve();
      },
    });
    scheduler.soon('start');
    await vi.advanceTimersByTimeAsync(30 * 60_000);
    scheduler.hint('changes');
    expect(scheduler.state().windowOpensAtMs).toBe(Date.parse('2026-11-26T22:00:00Z'));
    await vi.advanceTimersByTimeAsync(90 * 60_000 - 1);
    expect(cycles).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    // The rescan that fell due at 21:00 waited too: one cycle for the three.
    expect(cycles).toEqual([{ at: '2026-11-26T22:00:00.000Z', reasons: ['start', 'changes', 'rescan'] }]);
    expect(scheduler.state().windowOpensAtMs).toBeNull();

    // In the window a change syncs after the debounce; the rescan an hour later is still in it; the next one is not.
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    scheduler.hint('changes');
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(2 * 3600_000);
    expect(cycles.map((c) => c.at)).toEqual(['2026-11-26T22:00:00.000Z', '2026-11-26T22:10:01.000Z', '2026-11-26T23:10:01.000Z']);
    expect(scheduler.state().windowOpensAtMs).toBe(Date.parse('2026-11-27T22:00:00Z'));
    await vi.advanceTimersByTimeAsync(22 * 3600_000);
    expect(cycles.at(-1)).toEqual({ at: '2026-11-27T22:00:00.000Z', reasons: ['rescan'] });
    expect(cycles).toHaveLength(4);
    await scheduler.stop();
  });
});
