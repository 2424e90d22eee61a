import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WEBHOOK_TOLERANCE_SEC } from '../../../../src/client/webhook-verify.js';
import { openState, type StateStore } from '../../../../src/sync/state/index.js';
import { WEBHOOK_EVENTS_KEEP_DAYS, WEBHOOK_EVENTS_KEEP_ROWS } from '../../../../src/sync/state/retention.js';

const DAY_MS = 86_400_000;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A real state on disk whose clock the test moves. */
function stateAt(clock: { ms: number }, path?: string): { state: StateStore; path: string } {
  let statePath = path;
  if (statePath === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-webhook-events-'));
    dirs.push(dir);
    statePath = join(dir, 'state.db');
  }
  return { state: openState(statePath, { now: () => new Date(clock.ms) }), path: statePath };
}

/** A delivery received `ageMs` before `nowMs`, signed then (or at `sentAtMs`). */
const delivery = (id: string, nowMs: number, ageMs: number, sentAtMs = nowMs - ageMs) => ({
  id,
  type: 'intelligence.processed',
  sentAtSec: Math.floor(sentAtMs / 1000),
  receivedAtMs: nowMs - ageMs,
  data: { file_id: id },
});

const ids = (state: StateStore): string[] =>
  state
    .webhookEvents(WEBHOOK_EVENTS_KEEP_ROWS * 2)
    .map((e) => e.id)
    .sort();

describe('webhook_events retention', () => {
  it(`keeps ${WEBHOOK_EVENTS_KEEP_DAYS} days; an older delivery goes, unless its signed timestamp would still pass as fresh`, () => {
    const clock = { ms: Date.UTC(2030, 5, 1) };
    const { state, path } = stateAt(clock);
    const now = clock.ms;
    state.transaction(() => {
      state.recordWebhookEvent(delivery('old', now, (WEBHOOK_EVENTS_KEEP_DAYS + 1) * DAY_MS));
      state.recordWebhookEvent(delivery('recent', now, (WEBHOOK_EVENTS_KEEP_DAYS - 1) * DAY_MS));
      // Received long ago by the records, signed just now: forgetting its id would let a replay through.
      state.recordWebhookEvent(delivery('fresh-signature', now, (WEBHOOK_EVENTS_KEEP_DAYS + 1) * DAY_MS, now));
    });
    // The open pruned (an empty table then); recording prunes at most once an hour.
    expect(ids(state)).toEqual(['fresh-signature', 'old', 'recent']);

    expect(state.pruneWebhookEvents()).toBe(1);
    expect(ids(state)).toEqual(['fresh-signature', 'recent']);
    expect(state.webhookEventSeen('recent')).toBe(true);
    state.close();

    // Every open of the state prunes too: 2 days later "recent" is past the retention, and the signature is stale.
    clock.ms += 2 * DAY_MS;
    const reopened = stateAt(clock, path).state;
    expect(ids(reopened)).toEqual([]);
    reopened.close();
  });

  it(`keeps at most the newest ${WEBHOOK_EVENTS_KEEP_ROWS} deliveries, of those whose signature is stale`, () => {
    const clock = { ms: Date.UTC(2030, 5, 1) };
    const { state } = stateAt(clock);
    const now = clock.ms;
    const staleSigned = now - (WEBHOOK_TOLERANCE_SEC + 60) * 1000;
    state.transaction(() => {
      for (let i = 0; i < WEBHOOK_EVENTS_KEEP_ROWS + 5; i++)
        state.recordWebhookEvent(delivery(`e${String(i).padStart(6, '0')}`, now, (WEBHOOK_EVENTS_KEEP_ROWS + 5 - i) * 1000, staleSigned));
      state.recordWebhookEvent(delivery('oldest-but-fresh', now, DAY_MS, now));
    });

    // Past the newest 10,000: e000000..e000004 and 'oldest-but-fresh', whose signature still passes.
    expect(state.pruneWebhookEvents()).toBe(5);
    const kept = ids(state);
    expect(kept).toHaveLength(WEBHOOK_EVENTS_KEEP_ROWS + 1);
    expect(kept).toContain('oldest-but-fresh');
    expect(kept.slice(0, 2)).toEqual(['e000005', 'e000006']);
    state.close();
  });
});
