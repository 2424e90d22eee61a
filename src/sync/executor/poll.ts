import type { KnowledgeClient } from '../../client/index.js';
import type { StateStore } from '../state/index.js';
import { toRemoteStatus } from '../state/index.js';
import type { RemoteStatus } from '../types.js';

export type PollOptions = {
  timeoutMs: number;
  intervalMs: number;
  sleep?: (ms: number) => Promise<void>;
  nowMs?: () => number;
  /** Called after each listing: how many of the files are processed or failed, of how many. */
  onPoll?: (settled: number, total: number) => void;
};

/** Final processing states: nothing changes without a reprocess. */
const SETTLED = new Set<RemoteStatus>(['processed', 'failed']);

/**
 * Polls the remote listing until every given file is processed or failed, or the timeout passes;
 * records each status seen in the state. Returns the last status of each id (a missing id is "unknown":
 * the hosted service may list a file late) and the service's reason for each one that failed.
 */
export async function waitForProcessing(
  client: KnowledgeClient,
  state: StateStore,
  remoteIds: readonly string[],
  o: PollOptions,
): Promise<{ statuses: Map<string, RemoteStatus>; errors: Map<string, string>; timedOut: boolean }> {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const nowMs = o.nowMs ?? Date.now;
  const deadline = nowMs() + o.timeoutMs;
  const wanted = new Set(remoteIds);
  const statuses = new Map<string, RemoteStatus>();
  const errors = new Map<string, string>();
  for (const id of wanted) statuses.set(id, 'unknown');
  for (;;) {
    const seen = (await client.listAllFiles()).filter((file) => wanted.has(file.id));
    for (const file of seen) {
      statuses.set(file.id, toRemoteStatus(file.status));
      if (file.error !== null) errors.set(file.id, file.error);
      else errors.delete(file.id);
    }
    state.recordListing(seen);
    let settled = 0;
    for (const s of statuses.values()) if (SETTLED.has(s)) settled += 1;
    o.onPoll?.(settled, statuses.size);
    if (settled === statuses.size) return { statuses, errors, timedOut: false };
    if (nowMs() >= deadline) return { statuses, errors, timedOut: true };
    await sleep(Math.min(o.intervalMs, Math.max(0, deadline - nowMs())));
  }
}
