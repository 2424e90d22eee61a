import type { Routes } from '../routing.js';
import type * as z from 'zod';
import { sha256Hex } from '../../../shared/sha256.js';
import { commitPaid } from '../../billing/charge.js';
import { requireAdvancedTier } from '../../billing/tiers.js';
import { ServiceError, notFound } from '../../service-error.js';
import { attachmentMode, getVisibleAgent } from '../../store/agents.js';
import { findEntryBySha, insertEntry, listEntries } from '../../store/intelligence.js';
import { isoAt } from '../../store/time.js';
import type { ServiceContext } from '../context.js';
import { idempotent } from '../idempotency.js';
import { bodyId, lazySchemas, parseBody, parsePage } from '../request.js';
import { entryJson } from '../wire.js';
import { V2 } from './paths.js';

/** Spec section 8: at most 50 entries in one batch write. */
const MAX_BATCH_ENTRIES = 50;

const schemas = lazySchemas((z) => {
  const Entry = z.object({
    content: z.string().min(1),
    title: z.string().max(1_000).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  });
  return {
    Entry,
    Single: Entry.extend({ agent_id: bodyId(z) }),
    Batch: z.object({ agent_id: bodyId(z), entries: z.array(Entry).min(1) }),
  };
});

type Entry = z.infer<Awaited<ReturnType<typeof schemas>>['Entry']>;
type WriteResult = { id: number; sha256: string; status: string; duplicate: boolean; credits_charged: number };

/** Intelligence entries: single and batch writes (deduplicated by SHA-256), and the list. */
export function registerIntelligenceRoutes(app: Routes, ctx: ServiceContext): void {
  const { db } = ctx;

  /** The writing agent, which must be attached to the caller's dataset in `self_learning` mode. */
  const writableAgent = (datasetId: number, agentId: number): number => {
    if (getVisibleAgent(db, datasetId, agentId) === undefined) throw notFound('agent');
    const mode = attachmentMode(db, agentId, datasetId);
    if (mode !== 'self_learning') {
      throw new ServiceError(
        'mode_forbidden',
        `agent ${agentId} is attached to this dataset in ${mode ?? 'no'} mode; writes need self_learning`,
      );
    }
    return agentId;
  };

  /** Writes one entry, or finds its duplicate (and queues the `intelligence.deduped` event). Call inside the charge. */
  const writeEntry = (datasetId: number, agentId: number, entry: Entry, now: string): WriteResult => {
    const sha256 = sha256Hex(entry.content);
    const existing = findEntryBySha(db, datasetId, sha256);
    if (existing !== undefined) {
      ctx.webhooks.emit(datasetId, 'intelligence.deduped', { entry_id: existing.id, dataset_id: datasetId, agent_id: agentId, sha256 });
      return { id: existing.id, sha256, status: existing.status, duplicate: true, credits_charged: 0 };
    }
    const row = insertEntry(db, {
      datasetId,
      agentId,
      title: entry.title ?? null,
      content: entry.content,
      metadata: entry.metadata,
      sha256,
      now,
    });
    return { id: row.id, sha256, status: row.status, duplicate: false, credits_charged: 1 };
  };

  app.post(
    `${V2}/datasets/intelligence`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId } = req.auth;
      const body = parseBody((await schemas()).Single, req.body);
      const agentId = writableAgent(datasetId, body.agent_id);
      const now = isoAt(ctx.clock());
      const result = commitPaid(db, { datasetId, now, onCharged: idem?.onCharged }, () => {
        const written = writeEntry(datasetId, agentId, body, now);
        return {
          op: { kind: 'intelligence', duplicate: written.duplicate },
          ref: String(written.id),
          status: written.duplicate ? 200 : 201,
          respond: () => written,
        };
      });
      if (!result.body.duplicate) ctx.kickWorker();
      return result;
    }),
  );

  app.post(
    `${V2}/datasets/intelligence/batch`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId, plan } = req.auth;
      requireAdvancedTier(plan, 'batch intelligence write');
      const body = parseBody((await schemas()).Batch, req.body);
      if (body.entries.length > MAX_BATCH_ENTRIES) throw new ServiceError('validation_failed', `entries: at most ${MAX_BATCH_ENTRIES}`);
      const agentId = writableAgent(datasetId, body.agent_id);
      const now = isoAt(ctx.clock());
      // All or nothing: a short balance rolls back every entry of the batch.
      const result = commitPaid(db, { datasetId, now, onCharged: idem?.onCharged }, () => {
        const results = body.entries.map((entry) => writeEntry(datasetId, agentId, entry, now));
        const created = results.filter((r) => !r.duplicate).length;
        return {
          op: { kind: 'intelligence_batch', newEntries: created },
          ref: null,
          status: 200,
          respond: (credits) => ({ results, created, duplicates: results.length - created, credits_charged: credits }),
        };
      });
      if (result.body.created > 0) ctx.kickWorker();
      return result;
    }),
  );

  app.get(`${V2}/datasets/intelligence`, async (req) => {
    const { datasetId } = req.auth;
    const { rows, total } = listEntries(db, datasetId, await parsePage(req.query));
    return { entries: rows.map(entryJson), total };
  });
}
