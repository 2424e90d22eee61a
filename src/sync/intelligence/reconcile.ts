import type { IntelligenceEntry, KnowledgeClient } from '../../client/index.js';
import type { EntryRecord, StateStore } from '../state/index.js';

/** Page size of the entry listing. */
const PAGE = 1000;

/** Every entry of the dataset (`GET /datasets/intelligence`, paged; free). */
export async function listAllEntries(client: KnowledgeClient): Promise<IntelligenceEntry[]> {
  const byId = new Map<string, IntelligenceEntry>();
  for (let offset = 0; ;) {
    const { entries, total } = await client.listIntelligence({ limit: PAGE, offset });
    const before = byId.size;
    for (const e of entries) byId.set(e.id, e);
    // A server that ignores offset repeats page one: stop when a page brings nothing new.
    if (byId.size === before || byId.size >= total) break;
    offset += entries.length;
  }
  return [...byId.values()];
}

/** Meta key set once the entry listing has been adopted into a state that did not know it. */
export const ENTRY_LISTING_KEY = 'intel_listing_checked';

/**
 * Before planning the intelligence entries: every write whose outcome is unknown (a timeout, a crash
 * between the call and its record) is checked against the dataset's entry listing before anything is
 * sent again. All its entries listed: it went through (done, charged as planned, its entries recorded);
 * none or only some: back to pending, its reservation released, to be sent again with the same
 * idempotency key (the service answers a repeated key with its first answer, never a second charge).
 * With `adopt` (an intelligence source is configured), a state that has not seen the listing yet (new,
 * or recreated after a loss) adopts it too, so content the dataset already holds is never planned as a
 * write. Returns notes for people.
 */
export async function reconcileEntries(
  state: StateStore,
  getClient: () => Promise<KnowledgeClient>,
  o: { adopt: boolean },
): Promise<string[]> {
  const unknown = state.unknownOps().filter((op) => op.kind === 'intelligence' || op.kind === 'intelligence_batch');
  const adopt = o.adopt && state.getMeta(ENTRY_LISTING_KEY) === null;
  if (unknown.length === 0 && !adopt) return [];
  const listing = await listAllEntries(await getClient());
  const bySha = new Map<string, IntelligenceEntry>();
  for (const e of listing) if (e.sha256 !== null && !bySha.has(e.sha256)) bySha.set(e.sha256, e);
  const notes: string[] = [];
  let found = 0;
  let notFound = 0;
  for (const op of unknown) {
    const payload = op.payload;
    const listed = payload === null ? [] : payload.entries.map((e) => bySha.get(e.sha256));
    const all = payload !== null && listed.every((e) => e !== undefined);
    state.transaction(() => {
      if (!all) {
        state.resolveUnknown(op.id, null);
        return;
      }
      const first = listed[0] as IntelligenceEntry;
      state.resolveUnknown(op.id, { remoteId: first.id, status: 'processed' });
      state.recordEntries(
        payload.entries.map((e, i) => {
          const entry = listed[i] as IntelligenceEntry;
          return {
            sha256: e.sha256,
            agentId: payload.agentId,
            remoteId: entry.id,
            status: entry.status,
            source: e.source,
            path: e.path,
            title: e.title,
          };
        }),
      );
    });
    if (all) found++;
    else notFound++;
  }
  if (found + notFound > 0) {
    notes.push(
      `unknown intelligence writes reconciled: ${found} went through, ${notFound} did not (sent again with the same idempotency key)`,
    );
  }
  if (adopt) {
    const known = state.trackedEntries();
    const records: EntryRecord[] = [];
    for (const [sha, e] of bySha) {
      if (known.has(sha)) continue;
      records.push({ sha256: sha, agentId: '', remoteId: e.id, status: e.status, source: null, path: null, title: e.title });
    }
    state.transaction(() => {
      state.recordEntries(records);
      state.setMeta(ENTRY_LISTING_KEY, new Date().toISOString());
    });
    if (records.length > 0) notes.push(`intelligence entries already in the dataset: ${records.length} adopted from its listing`);
  }
  return notes;
}
