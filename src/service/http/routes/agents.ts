import type { ApiRequest, Routes } from '../routing.js';
import type * as z from 'zod';
import { isKbsyncError } from '../../../shared/errors.js';
import { costOf } from '../../../shared/plans.js';
import { assertBalance, commitPaid } from '../../billing/charge.js';
import { answerChat } from '../../chat/answer.js';
import { ServiceError, notFound } from '../../service-error.js';
import { getVisibleAgent, insertAgent, listAttachments, listVisibleAgents, setAgentConfig, type AgentRow } from '../../store/agents.js';
import { sourceName } from '../../store/files.js';
import { isoAt } from '../../store/time.js';
import type { ServiceContext } from '../context.js';
import { idempotent } from '../idempotency.js';
import { lazySchemas, parseBody, parseIdParam } from '../request.js';
import { agentJson, agentWithDatasetsJson, hitJson } from '../wire.js';
import { V1 } from './paths.js';

const MAX_TOP_K = 20;

const schemas = lazySchemas((z) => {
  /** An agent's config: the known keys are typed, others are kept as given. */
  const AgentConfig = z
    .object({
      system_prompt: z.string().max(20_000).optional(),
      temperature: z.number().min(0).max(2).optional(),
      top_k: z.number().int().min(1).optional(),
    })
    .catchall(z.unknown());
  return {
    AgentConfig,
    AgentCreate: z.object({ name: z.string().trim().min(1).max(200), config: AgentConfig.default({}) }),
    // Strict wrapper (a field beside `config` would be silently dropped); the config itself is free-form.
    ConfigUpdate: z.strictObject({ config: AgentConfig }),
    Chat: z.object({ message: z.string().min(1).max(20_000) }),
  };
});

function checkConfig(config: z.infer<Awaited<ReturnType<typeof schemas>>['AgentConfig']>): void {
  if (config.top_k !== undefined && config.top_k > MAX_TOP_K)
    throw new ServiceError('validation_failed', `config.top_k: at most ${MAX_TOP_K}`);
}

/** The agent named by the `:agent` path parameter, when the caller's dataset may see it. */
function visibleAgent(ctx: ServiceContext, req: ApiRequest): AgentRow {
  const { datasetId } = req.auth;
  const agentId = parseIdParam(req.params['agent'], 'agent');
  const agent = getVisibleAgent(ctx.db, datasetId, agentId);
  if (agent === undefined) throw notFound('agent');
  return agent;
}

/** Agents: list, create, get, config update, chat. */
export function registerAgentRoutes(app: Routes, ctx: ServiceContext): void {
  const { db } = ctx;

  app.get(`${V1}/agents/`, async (req) => {
    return { agents: listVisibleAgents(db, req.auth.datasetId).map(agentJson) };
  });

  app.post(
    `${V1}/agents/`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId } = req.auth;
      const body = parseBody((await schemas()).AgentCreate, req.body);
      checkConfig(body.config);
      const now = isoAt(ctx.clock());
      return commitPaid(db, { datasetId, now, onCharged: idem?.onCharged }, () => {
        const agent = insertAgent(db, { datasetId, name: body.name, config: body.config, now });
        return { op: { kind: 'agent_create' }, ref: String(agent.id), status: 201, respond: () => agentJson(agent) };
      });
    }),
  );

  app.get(`${V1}/agents/:agent`, async (req) => {
    const agent = visibleAgent(ctx, req);
    return agentWithDatasetsJson(agent, listAttachments(db, agent.id));
  });

  app.put(
    `${V1}/agents/:agent/config`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId } = req.auth;
      const agent = visibleAgent(ctx, req);
      const body = parseBody((await schemas()).ConfigUpdate, req.body);
      checkConfig(body.config);
      const now = isoAt(ctx.clock());
      return commitPaid(db, { datasetId, now, onCharged: idem?.onCharged }, () => {
        setAgentConfig(db, agent.id, body.config, now);
        const updated = getVisibleAgent(db, datasetId, agent.id) as AgentRow;
        return {
          op: { kind: 'agent_config' },
          ref: String(agent.id),
          status: 200,
          respond: () => agentWithDatasetsJson(updated, listAttachments(db, agent.id)),
        };
      });
    }),
  );

  app.post(
    `${V1}/agents/:agent/chat`,
    idempotent(ctx, async (req, idem) => {
      const { datasetId } = req.auth;
      const agent = visibleAgent(ctx, req);
      const body = parseBody((await schemas()).Chat, req.body);
      // Fail before the (possibly slow, possibly remote) answer when even one credit is missing.
      assertBalance(db, datasetId, costOf({ kind: 'chat' }));
      const answer = await answerChat({
        db,
        datasetId,
        message: body.message,
        agentConfig: JSON.parse(agent.config_json) as Record<string, unknown>,
        ...(ctx.llmUrl === undefined ? {} : { llmUrl: ctx.llmUrl }),
        embedder: ctx.embedder,
        sourceName: (id) => sourceName(db, id),
      }).catch((err: unknown) => {
        // The language model's failure is the server's (502), and costs nothing; its message never names the URL.
        if (isKbsyncError(err, 'llm_failed'))
          throw new ServiceError('internal', `chat answer failed: ${err.message}`, { status: 502, cause: err });
        if (isKbsyncError(err, 'embeddings_failed'))
          throw new ServiceError('internal', `chat answer failed: ${err.message}`, { status: 502, cause: err });
        throw err;
      });
      return commitPaid(db, { datasetId, now: isoAt(ctx.clock()), onCharged: idem?.onCharged }, () => ({
        op: { kind: 'chat' },
        ref: String(agent.id),
        status: 200,
        respond: () => ({ response: answer.response, sources: answer.sources.map(hitJson) }),
      }));
    }),
  );
}
