import { reply, type ApiRequest, type Routes } from '../routing.js';
import { notFound } from '../../service-error.js';
import {
  attachmentMode,
  getVisibleAgent,
  insertAttachment,
  listAttachments,
  setAttachmentMode,
  type DatasetMode,
} from '../../store/agents.js';
import { isoAt } from '../../store/time.js';
import type { ServiceContext } from '../context.js';
import { bodyId, lazySchemas, parseBody, parseIdParam } from '../request.js';
import { V2 } from './paths.js';
import { writeTransaction } from '../../store/write-transaction.js';

const schemas = lazySchemas((z) => {
  const Mode = z.enum(['read_only', 'self_learning']);
  return {
    Attach: z.object({ dataset_id: bodyId(z), mode: Mode.optional() }),
    // Strict: a mistyped field would otherwise be a silent no-op (docs/service.md).
    ModeUpdate: z.strictObject({ mode: Mode }),
  };
});

/** Agent-dataset management: list, attach, set mode (emits `dataset.mode_changed`). */
export function registerAgentDatasetRoutes(app: Routes, ctx: ServiceContext): void {
  const { db } = ctx;

  const agentOf = (req: ApiRequest): number => {
    const { datasetId } = req.auth;
    const agentId = parseIdParam(req.params['agent_id'], 'agent');
    if (getVisibleAgent(db, datasetId, agentId) === undefined) throw notFound('agent');
    return agentId;
  };

  /** Sets the mode and, when it changed, queues the event in the same transaction. */
  const changeMode = (agentId: number, datasetId: number, mode: DatasetMode): void => {
    writeTransaction(db, () => {
      const previous = attachmentMode(db, agentId, datasetId);
      if (previous === undefined || previous === mode) return;
      setAttachmentMode(db, agentId, datasetId, mode);
      ctx.webhooks.emit(datasetId, 'dataset.mode_changed', { agent_id: agentId, dataset_id: datasetId, mode, previous_mode: previous });
    })();
  };

  app.get(`${V2}/agents/:agent_id/datasets`, async (req) => {
    const agentId = agentOf(req);
    const { datasetId } = req.auth;
    // A dataset-scoped key sees only its own dataset among the agent's attachments.
    const datasets = listAttachments(db, agentId)
      .filter((a) => a.dataset_id === datasetId)
      .map((a) => ({ id: a.dataset_id, name: a.name, mode: a.mode }));
    return { datasets };
  });

  app.post(`${V2}/agents/:agent_id/datasets`, async (req) => {
    const agentId = agentOf(req);
    const { datasetId } = req.auth;
    const body = parseBody((await schemas()).Attach, req.body);
    if (body.dataset_id !== datasetId) throw notFound('dataset');
    const existing = attachmentMode(db, agentId, datasetId);
    if (existing === undefined) {
      insertAttachment(db, { agentId, datasetId, mode: body.mode ?? 'read_only', now: isoAt(ctx.clock()) });
      return reply(201, { id: datasetId, mode: body.mode ?? 'read_only' });
    }
    if (body.mode !== undefined) changeMode(agentId, datasetId, body.mode);
    return { id: datasetId, mode: attachmentMode(db, agentId, datasetId) };
  });

  app.patch(`${V2}/agents/:agent_id/datasets/:dataset_id`, async (req) => {
    const agentId = agentOf(req);
    const { datasetId } = req.auth;
    const target = parseIdParam(req.params['dataset_id'], 'dataset');
    if (target !== datasetId || attachmentMode(db, agentId, datasetId) === undefined) throw notFound('dataset');
    const body = parseBody((await schemas()).ModeUpdate, req.body);
    changeMode(agentId, datasetId, body.mode);
    return { id: datasetId, mode: attachmentMode(db, agentId, datasetId) };
  });
}
