import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openState, type StateStore } from '../../../src/sync/state/index.js';
import { guestsDir } from '../../../src/sync/state/sqlite/guests.js';
import { tempState } from './fixtures/state-dir.js';

const CAPS = { run: 100, day: 100, month: 100 };

/** A query call of `store` left in flight, under a run of its own; returns the op's id. */
function queryInFlight(store: StateStore): { runId: number; opId: number } {
  const runId = store.startRun('query');
  const opId = store.enqueue({ kind: 'query', credits: 1, reason: 'query "x"', runId });
  expect(store.reserve(opId, CAPS, runId)).toEqual({ ok: true });
  expect(store.getOp(opId)?.state).toBe('in_flight');
  return { runId, opId };
}

describe('guests of a SQLite state (paid commands beside the runner that holds it)', () => {
  let t: ReturnType<typeof tempState>;
  beforeEach(() => {
    t = tempState();
    openState(t.path).close();
  });
  afterEach(() => t.cleanup());

  it("a new lock holder's recovery leaves a live guest's in-flight call and run alone; the guest settles and finishes them", () => {
    const guest = openState(t.path, { access: 'guest' });
    const { runId, opId } = queryInFlight(guest);

    const writer = openState(t.path);

    expect(writer.recoveredInFlight).toBe(0);
    expect(writer.getOp(opId)?.state).toBe('in_flight');
    expect(writer.getRun(runId)?.status).toBe('running');
    guest.settle(opId, { outcome: 'done', creditsCharged: 1, remoteId: null });
    guest.finishRun(runId, 'done', {});
    expect(writer.creditsUsed(null).spent.day).toBe(1);
    writer.close();
    guest.close();
  });

  it('the in-flight call of a guest that died is recovered (unknown, its reservation kept) by the next lock holder', () => {
    const store = openState(t.path, { lock: false });
    const { runId, opId } = queryInFlight(store);
    store.close();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
    mkdirSync(guestsDir(resolve(t.path)), { recursive: true });
    writeFileSync(join(guestsDir(resolve(t.path)), `${dead}-x.json`), JSON.stringify({ pid: dead, host: hostname(), startedAtMs: 0 }));

    const writer = openState(t.path);

    expect(writer.recoveredInFlight).toBe(1);
    expect(writer.getOp(opId)?.state).toBe('unknown');
    expect(writer.getRun(runId)?.status).toBe('interrupted');
    expect(writer.creditsUsed(null).reserved.day).toBe(1);
    writer.close();
  });

  it('a reader beside the writer reads, and cannot write', () => {
    const writer = openState(t.path);
    writer.setMeta('k', 'v');
    const reader = openState(t.path, { access: 'reader' });

    expect(reader.getMeta('k')).toBe('v');
    expect(reader.readOnly).toBe(true);
    expect(() => reader.setMeta('k', 'w')).toThrow();
    reader.close();
    writer.close();
  });
});
