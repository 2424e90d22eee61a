import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/client/errors.js';
import { paidQueue, runPaidTasks, type PaidTask } from '../../../src/sync/executor/index.js';
import type { StateStore } from '../../../src/sync/state/index.js';
import { createManualClock, type ManualClock } from '../../helpers/manual-clock.js';
import { FAST_TMP, tempState, uploadOp } from '../state/fixtures/state-dir.js';

/**
 * The run's paid calls against 429s and 402s, on a real state database and a hand-driven clock: which
 * call starts when, what each ends as, and what the outbox and the ledger hold after.
 */

const CAPS = { run: 10_000, day: 10_000, month: 10_000 };
const COST = 5;

/** How one attempt of a fake call ends: charged, refused with 429, out of credits, or held in flight until released. */
type Answer = 'ok' | { status: 429; retryAfterMs: number } | { status: 402 } | 'hold' | 'refused' | 'lost' | 'no-answer';

type Harness = {
  clock: ManualClock;
  state: StateStore;
  /** Each call as it started: its name and the clock then. */
  starts: { name: string; atMs: number }[];
  /** Releases the calls held in flight ('hold'), each charged. */
  release(): void;
  task(kind: 'upload' | 'reprocess', name: string, answers: Answer[]): PaidTask;
};

let t: ReturnType<typeof tempState>;
let h: Harness;

/** Lets every callback that is due run (promise jobs, SQLite, p-queue's own ticks). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

beforeEach(() => {
  t = tempState(FAST_TMP);
  const clock = createManualClock();
  const state = t.open();
  const starts: { name: string; atMs: number }[] = [];
  const held: (() => void)[] = [];
  const start0 = clock.now();
  h = {
    clock,
    state,
    starts,
    release: () => {
      for (const r of held.splice(0)) r();
    },
    task(kind, name, answers) {
      let attempt = 0;
      const op =
        kind === 'upload'
          ? { ...uploadOp(name, COST, createHash('sha256').update(name).digest('hex')) }
          : {
              kind: 'reprocess' as const,
              source: 'docs',
              path: name,
              remoteId: `r-${name}`,
              credits: COST,
              reason: 'remote processing failed',
            };
      return {
        op,
        perform: async () => {
          starts.push({ name, atMs: clock.now() - start0 });
          const answer = answers[Math.min(attempt++, answers.length - 1)] as Answer;
          if (answer === 'hold') await new Promise<void>((resolve) => held.push(resolve));
          else if (answer === 'refused')
            throw new ApiError({ code: 'network', status: null, method: 'POST', url: '/x', message: 'POST /x: connect ECONNREFUSED' });
          else if (answer === 'no-answer')
            throw new ApiError({
              code: 'unknown_outcome',
              status: null,
              method: 'POST',
              url: '/x',
              message: 'POST /x: no answer, outcome unknown (headers timeout)',
              cause: Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
            });
          else if (answer === 'lost')
            throw new ApiError({ code: 'unknown_outcome', status: 503, method: 'POST', url: '/x', message: 'POST /x answered 503' });
          else if (answer !== 'ok') {
            const code = answer.status === 429 ? 'rate_limited' : 'insufficient_credits';
            throw new ApiError({
              code,
              status: answer.status,
              method: 'POST',
              url: '/x',
              message: `answered ${answer.status} ${code}`,
              retryAfterMs: answer.status === 429 ? answer.retryAfterMs : null,
            });
          }
          return { outcome: 'done', creditsCharged: COST, remoteId: `id-${name}` };
        },
      };
    },
  };
});
afterEach(() => t.cleanup());

/** Runs the tasks, letting the test drive the clock in `drive`, and returns what the run came to. */
async function runDriven(
  tasks: PaidTask[],
  o: { concurrency?: number; maxRetryAfterMs?: number; canary?: boolean; state?: StateStore },
  drive: () => Promise<void>,
) {
  const runId = h.state.startRun('sync');
  const queue = paidQueue(o.concurrency ?? 2, 1000, h.clock);
  let done = false;
  const p = runPaidTasks(tasks, {
    state: o.state ?? h.state,
    runId,
    caps: CAPS,
    queue,
    maxRetryAfterMs: o.maxRetryAfterMs ?? 60_000,
    canary: o.canary === true,
  });
  void p.finally(() => {
    done = true;
  });
  await settle();
  await drive();
  await settle();
  if (!done) throw new Error(`the run has not finished; calls started: ${JSON.stringify(h.starts)}`);
  return { ...(await p), runId };
}

const advance = async (ms: number): Promise<void> => {
  h.clock.advance(ms);
  await settle();
};
const names = (): string[] => h.starts.map((s) => `${s.name}@${s.atMs}`);
/**
 * The ledger is consistent, nothing stays reserved or in flight, `spent` was charged in all, and the
 * outbox keeps a pending row (no reservation) for each call `stopped` before it was made: the next run's.
 */
function expectLedger(spent: number, stopped: string[] = []): void {
  expect(h.state.verifyTotals()).toEqual([]);
  expect(h.state.ledgerTotals().all).toMatchObject({ reserved: 0, spent });
  expect(h.state.inFlightOps()).toEqual([]);
  expect(
    h.state
      .pendingOps()
      .map((op) => [op.path, op.reserved])
      .sort(),
  ).toEqual(stopped.sort().map((path) => [path, 0]));
}

describe('a 429 pauses its endpoint until Retry-After has passed', () => {
  it('no upload starts inside the window; the one in flight finishes; the refused one goes again after it; each charged once', async () => {
    const tasks = [
      h.task('upload', 'u0', ['hold']),
      h.task('upload', 'u1', [{ status: 429, retryAfterMs: 2_000 }, 'ok']),
      h.task('upload', 'u2', ['ok']),
      h.task('upload', 'u3', ['ok']),
    ];

    const r = await runDriven(tasks, { concurrency: 2 }, async () => {
      expect(names()).toEqual(['u0@0', 'u1@0']);
      h.release();
      await settle();
      await advance(1_999);
      expect(names(), 'nothing may start inside the window, though two slots are free').toEqual(['u0@0', 'u1@0']);
      await advance(1);
    });

    expect(names()).toEqual(['u0@0', 'u1@0', 'u1@2000', 'u2@2000', 'u3@2000']);
    expect(r.stop).toBeNull();
    expect(r.results.map((x) => x.outcome)).toEqual(['done', 'done', 'done', 'done']);
    expectLedger(4 * COST);
    expect(h.state.opsForPath('docs', 'u1').map((op) => [op.state, op.errorCode])).toEqual([
      ['failed', 'rate_limited'],
      ['done', null],
    ]);
  });

  it('a call waiting out the pause holds no slot: with concurrency 1, a reprocess (another endpoint) runs inside the upload window', async () => {
    const tasks = [
      h.task('upload', 'u0', [{ status: 429, retryAfterMs: 2_000 }, 'ok']),
      h.task('reprocess', 'r0', ['ok']),
      h.task('upload', 'u1', ['ok']),
    ];

    const r = await runDriven(tasks, { concurrency: 1 }, async () => {
      await advance(2_000);
    });

    expect(names()).toEqual(['u0@0', 'r0@0', 'u0@2000', 'u1@2000']);
    expect(r.results.map((x) => x.outcome)).toEqual(['done', 'done', 'done']);
    expectLedger(3 * COST);
  });

  it('a second 429 inside the window makes it longer, not shorter', async () => {
    const tasks = [h.task('upload', 'u0', ['hold']), h.task('upload', 'u1', [{ status: 429, retryAfterMs: 1_000 }, 'ok'])];
    const late = h.task('upload', 'u2', [{ status: 429, retryAfterMs: 3_000 }, 'ok']);

    const r = await runDriven([...tasks, late], { concurrency: 3 }, async () => {
      expect(names()).toEqual(['u0@0', 'u1@0', 'u2@0']);
      h.release();
      await advance(2_999);
      expect(names()).toEqual(['u0@0', 'u1@0', 'u2@0']);
      await advance(1);
    });

    expect(names()).toEqual(['u0@0', 'u1@0', 'u2@0', 'u1@3000', 'u2@3000']);
    expect(r.results.map((x) => x.outcome)).toEqual(['done', 'done', 'done']);
    expectLedger(3 * COST);
  });

  it('a Retry-After above maxRetryAfterMs stops the run at once: the refused call and the rest deferred, nothing else sent, every reservation released', async () => {
    const tasks = [
      h.task('upload', 'u0', [{ status: 429, retryAfterMs: 2_000 }, 'ok']),
      h.task('reprocess', 'r0', [{ status: 429, retryAfterMs: 120_000 }]),
      h.task('upload', 'u1', ['ok']),
      h.task('reprocess', 'r1', ['ok']),
    ];

    // No clock move: the calls waiting out the upload pause give up when the run stops.
    const r = await runDriven(tasks, { concurrency: 1, maxRetryAfterMs: 60_000 }, async () => {});

    expect(names()).toEqual(['u0@0', 'r0@0']);
    expect(r.stop).toMatchObject({
      by: 'retry-after',
      code: 'rate_limited',
      message: expect.stringMatching(/120 s.*upload\.maxRetryAfterSeconds \(60 s\)/),
    });
    expect(r.results.map((x) => [x.outcome, x.deferred?.by])).toEqual([
      ['not-run', 'stopped'],
      ['not-run', 'refused'],
      ['not-run', 'stopped'],
      ['not-run', 'stopped'],
    ]);
    expectLedger(0, ['u0', 'u1', 'r1']);
  });

  it('a call refused again after each of 3 waits stops the run (rate_limited, exit 4 by the service) instead of going on', async () => {
    const refused = { status: 429 as const, retryAfterMs: 1_000 };
    const tasks = [h.task('upload', 'u0', [refused]), h.task('upload', 'u1', ['ok'])];

    const r = await runDriven(tasks, { concurrency: 1 }, async () => {
      for (let i = 0; i < 3; i++) await advance(1_000);
    });

    expect(names()).toEqual(['u0@0', 'u0@1000', 'u0@2000', 'u0@3000']);
    expect(r.stop).toMatchObject({ by: 'service', code: 'rate_limited' });
    expect(r.results.map((x) => [x.outcome, x.deferred?.by])).toEqual([
      ['not-run', 'refused'],
      ['not-run', 'stopped'],
    ]);
    expectLedger(0, ['u1']);
  });
});

describe('a 402 stops the spending and defers what it did not send', () => {
  it('the refused calls and the rest are deferred, not failed; the calls in flight finish; nothing stays reserved', async () => {
    const tasks = [
      h.task('upload', 'u0', ['hold']),
      h.task('upload', 'u1', [{ status: 402 }]),
      h.task('upload', 'u2', ['ok']),
      h.task('upload', 'u3', ['ok']),
    ];

    const r = await runDriven(tasks, { concurrency: 2 }, async () => {
      h.release();
    });

    expect(names()).toEqual(['u0@0', 'u1@0']);
    expect(r.stop).toMatchObject({ by: 'service', code: 'insufficient_credits' });
    expect(r.results.map((x) => [x.outcome, x.deferred?.by])).toEqual([
      ['done', undefined],
      ['not-run', 'refused'],
      ['not-run', 'stopped'],
      ['not-run', 'stopped'],
    ]);
    expectLedger(COST, ['u2', 'u3']);
  });
});

describe('a target that does not answer stops the sending; what was not sent waits, pending', () => {
  it('connection refused: the run stops at once; the refused call and the rest are pending again, none failed, nothing reserved', async () => {
    const tasks = [h.task('upload', 'u0', ['refused']), h.task('upload', 'u1', ['ok']), h.task('upload', 'u2', ['ok'])];

    const r = await runDriven(tasks, { concurrency: 1 }, async () => {});

    expect(names()).toEqual(['u0@0']);
    expect(r.stop).toMatchObject({ by: 'unreachable', code: 'network' });
    expect(r.stop?.message).toMatch(/ECONNREFUSED/);
    expect(r.results.map((x) => [x.outcome, x.deferred?.by])).toEqual([
      ['not-run', 'unreachable'],
      ['not-run', 'unreachable'],
      ['not-run', 'unreachable'],
    ]);
    expectLedger(0, ['u0', 'u1', 'u2']);
  });

  it('two answers lost in a row (503 to a paid call) stop the run: both unknown, to be reconciled; the rest pending', async () => {
    const tasks = [
      h.task('upload', 'u0', ['lost']),
      h.task('upload', 'u1', ['lost']),
      h.task('upload', 'u2', ['ok']),
      h.task('upload', 'u3', ['ok']),
    ];

    const r = await runDriven(tasks, { concurrency: 1 }, async () => {});

    expect(names()).toEqual(['u0@0', 'u1@0']);
    expect(r.stop).toMatchObject({ by: 'unreachable', code: 'unknown_outcome' });
    expect(r.results.map((x) => x.outcome)).toEqual(['unknown', 'unknown', 'not-run', 'not-run']);
    expect(h.state.unknownOps().map((op) => op.path)).toEqual(['u0', 'u1']);
  });

  it('a call that timed out waiting for its answer (a hung target) stops the run at once: no other call is sent into it', async () => {
    const tasks = [h.task('upload', 'u0', ['no-answer']), h.task('upload', 'u1', ['ok']), h.task('upload', 'u2', ['ok'])];

    const r = await runDriven(tasks, { concurrency: 1 }, async () => {});

    expect(names()).toEqual(['u0@0']);
    expect(r.stop).toMatchObject({ by: 'unreachable', code: 'unknown_outcome' });
    expect(r.results.map((x) => x.outcome)).toEqual(['unknown', 'not-run', 'not-run']);
  });

  it('canary: the first call goes alone, and when it fails nothing else is sent', async () => {
    const tasks = [h.task('upload', 'u0', ['lost']), h.task('upload', 'u1', ['ok']), h.task('upload', 'u2', ['ok'])];

    const r = await runDriven(tasks, { concurrency: 4, canary: true }, async () => {});

    expect(names()).toEqual(['u0@0']);
    expect(r.stop).toMatchObject({ by: 'unreachable' });
    expect(r.results.map((x) => x.outcome)).toEqual(['unknown', 'not-run', 'not-run']);
  });

  it('canary: once the first call is done, the rest go with the full concurrency', async () => {
    const tasks = [
      h.task('upload', 'u0', ['ok']),
      h.task('upload', 'u1', ['hold']),
      h.task('upload', 'u2', ['hold']),
      h.task('upload', 'u3', ['ok']),
    ];

    const r = await runDriven(tasks, { concurrency: 3, canary: true }, async () => {
      expect(names()).toEqual(['u0@0', 'u1@0', 'u2@0', 'u3@0']);
      h.release();
    });

    expect(r.stop).toBeNull();
    expectLedger(4 * COST);
  });
});

describe('a state write that fails (a full disk) while calls are in flight', () => {
  it('the run throws only once the calls in flight are settled, and no other call starts after the failure', async () => {
    // u0's outcome cannot be written, whatever it is (the disk filled as its call was made).
    const state: StateStore = {
      ...h.state,
      settle: (opId, outcome) => {
        if (h.state.getOp(opId)?.path === 'u0') throw new Error('the state database could not be written: the disk is full');
        h.state.settle(opId, outcome);
      },
    };
    const tasks = [
      h.task('upload', 'u0', ['ok']),
      h.task('upload', 'u1', ['hold']),
      h.task('upload', 'u2', ['ok']),
      h.task('upload', 'u3', ['ok']),
    ];
    const runId = h.state.startRun('sync');
    let ended = false;
    const p = runPaidTasks(tasks, { state, runId, caps: CAPS, queue: paidQueue(2, 1000, h.clock), maxRetryAfterMs: 60_000 });
    void p.then(
      () => (ended = true),
      () => (ended = true),
    );
    await settle();
    // u0's outcome could not be written; u1 is still in flight: the run waits for it.
    expect(ended).toBe(false);
    expect(names()).toEqual(['u0@0', 'u1@0']);
    h.release();
    await settle();
    await expect(p).rejects.toThrow(/disk is full/);
    // Nothing started after the failure; u1's outcome is recorded, u0's call stays in flight for the recovery.
    expect(names()).toEqual(['u0@0', 'u1@0']);
    expect(h.state.opsForPath('docs', 'u1').map((op) => op.state)).toEqual(['done']);
    expect(h.state.inFlightOps().map((op) => op.path)).toEqual(['u0']);
  });
});
