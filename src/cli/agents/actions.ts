import { isDeepStrictEqual } from 'node:util';
import type { Agent, DatasetMode, KnowledgeClient } from '../../client/index.js';
import { KbsyncError } from '../../shared/errors.js';
import { costOf } from '../../shared/plans.js';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import type { Session } from '../session.js';
import { mergedConfig, settingsOf, type AgentConfigOptions } from './config-options.js';
import { agentJson, formatAgent, formatAgentList, formatAttachments } from './format.js';
import { agentLabel, resolveAgent } from './resolve.js';

type Json = { json?: boolean };

const NAME_MAX = 200;

/** `agents list`: the agents the dataset's key sees (free). */
export async function listAgents(s: Session, o: Json): Promise<void> {
  const agents = await (await s.getClient()).listAgents();
  if (o.json === true) writeJson(s.ctx, { agents: agents.map(agentJson) });
  else writeLines(s.ctx, ...formatAgentList(agents));
}

/** `agents show AGENT`: one agent with its config and datasets (free). */
export async function showAgent(s: Session, ref: string, o: Json): Promise<void> {
  const client = await s.getClient();
  const agent = await client.getAgent((await resolveAgent(client, ref)).id);
  if (o.json === true) writeJson(s.ctx, { agent: agentJson(agent) });
  else writeLines(s.ctx, ...formatAgent(agent));
}

/**
 * `agents create NAME`: 5 credits, recorded and admitted against the budget first (paidCall). A name an
 * agent has already is refused before anything is paid (kbsync finds agents by name), which is also what
 * makes running the command again after a lost answer safe. An unknown outcome is checked in the listing.
 */
export async function createAgent(s: Session, name: string, o: AgentConfigOptions & Json): Promise<void> {
  const wanted = name.trim();
  if (wanted === '' || wanted.length > NAME_MAX) throw new KbsyncError('usage', `the agent's name: 1 to ${NAME_MAX} characters`);
  if (/^\d+$/.test(wanted))
    throw new KbsyncError('usage', `the agent's name "${wanted}" is a number, which reads as an agent id: choose a name with a letter`);
  const settings = settingsOf(o, s.ctx.cwd);
  const client = await s.getClient();
  const before = await client.listAgents();
  const same = before.filter((a) => a.name === wanted);
  if (same.length > 0) {
    throw new KbsyncError(
      'usage',
      `an agent named "${wanted}" exists already (${same.map((a) => `id ${a.id}`).join(', ')}); nothing was created or charged. See it with \`kbsync agents show ${quoteArg(wanted)}\`, change it with \`kbsync agents config ${quoteArg(wanted)} ...\`, or choose another name`,
    );
  }
  const known = new Set(before.map((a) => a.id));
  const { paidCall, capsOf } = await import('../../sync/executor/index.js');
  const created = await paidCall(s.state, capsOf(s.config), {
    kind: 'agent_create',
    reason: `create agent "${wanted}"`,
    perform: async (idempotencyKey) => {
      const agent = await client.createAgent(
        { name: wanted, ...(Object.keys(settings).length > 0 ? { config: settings } : {}) },
        { idempotencyKey },
      );
      return { value: agent, creditsCharged: null, remoteId: agent.id };
    },
    verifyUnknown: async () => {
      const made = (await client.listAgents()).filter((a) => a.name === wanted && !known.has(a.id));
      return made.length === 1 ? { value: made[0] as Agent, remoteId: (made[0] as Agent).id } : null;
    },
  });
  // The agent with its datasets (free); the created one is what was paid for if this read fails.
  const agent = await client.getAgent(created.id).catch(() => created);
  const credits = costOf({ kind: 'agent_create' });
  if (o.json === true) {
    writeJson(s.ctx, { agent: agentJson(agent), credits });
    return;
  }
  const datasets = agent.datasets ?? [];
  writeLines(
    s.ctx,
    `created agent ${agentLabel(agent)}: ${credits} credits`,
    ...datasets.map((d) => `  attached to dataset ${d.id} (${d.mode})`),
    `  ask it: kbsync chat ${quoteArg(agent.name ?? agent.id)} "your question"`,
  );
}

/**
 * `agents config AGENT`: sets (and with --unset removes) config keys. The service replaces the whole
 * config (PUT), so the agent's current config is read first and sent again with the changes. 2 credits,
 * through paidCall; a config the changes leave as it is is not sent, and costs nothing.
 */
export async function configureAgent(s: Session, ref: string, o: AgentConfigOptions & Json): Promise<void> {
  const settings = settingsOf(o, s.ctx.cwd);
  const unset = o.unset ?? [];
  if (Object.keys(settings).length === 0 && unset.length === 0) {
    throw new KbsyncError(
      'usage',
      'nothing to change: give --system-prompt, --system-prompt-file, --temperature, --top-k, --set KEY=VALUE or --unset KEY (`kbsync agents show AGENT` prints the config)',
    );
  }
  const client = await s.getClient();
  const { id, label } = await resolveAgent(client, ref);
  const current = await client.getAgent(id);
  const { config, changed } = mergedConfig(current.config, settings, unset);
  if (!changed) {
    if (o.json === true) writeJson(s.ctx, { agent: agentJson(current), changed: false, credits: 0 });
    else writeLines(s.ctx, `agent ${label}: the config is already so; nothing sent, no credit spent`);
    return;
  }
  const { paidCall, capsOf } = await import('../../sync/executor/index.js');
  const updated = await paidCall(s.state, capsOf(s.config), {
    kind: 'agent_config',
    reason: `config of agent ${label}: ${[...Object.keys(settings), ...unset.map((k) => `-${k}`)].join(', ')}`,
    perform: async (idempotencyKey) => ({
      value: await client.updateAgentConfig(id, config, { idempotencyKey }),
      creditsCharged: null,
      remoteId: id,
    }),
    verifyUnknown: async () => {
      const now = await client.getAgent(id);
      return isDeepStrictEqual(now.config, config) ? { value: now, remoteId: id } : null;
    },
  });
  const credits = costOf({ kind: 'agent_config' });
  if (o.json === true) writeJson(s.ctx, { agent: agentJson(updated), changed: true, credits });
  else writeLines(s.ctx, `updated the config of agent ${label}: ${credits} credits`, ...formatAgent(updated).slice(1));
}

/** What `agents datasets AGENT [ACTION] [ARGS...]` was asked. */
export type DatasetsRequest = { action: string | undefined; args: string[]; mode?: string } & Json;

const MODES: readonly DatasetMode[] = ['read_only', 'self_learning'];

/**
 * `agents datasets AGENT`: lists the datasets attached to the agent; `attach [DATASET]` attaches one (the
 * target's dataset by default; `--mode`, else read_only for a new attachment); `mode MODE [DATASET]` sets
 * an attachment's mode (read_only or self_learning). All free (docs/api.md).
 */
export async function agentDatasets(s: Session, ref: string, r: DatasetsRequest): Promise<void> {
  const action = r.action ?? 'list';
  const client = await s.getClient();
  if (action === 'list') {
    refuseExtra(r.args, 0, 'list');
    if (r.mode !== undefined)
      throw new KbsyncError('usage', '--mode goes with `attach`; to change a mode: `kbsync agents datasets AGENT mode MODE`');
    const agent = await resolveAgent(client, ref);
    const datasets = await client.listAgentDatasets(agent.id);
    if (r.json === true) writeJson(s.ctx, { agent: { id: agent.id, name: agent.name }, datasets });
    else writeLines(s.ctx, ...formatAttachments(agent.label, datasets));
    return;
  }
  if (action === 'attach') {
    refuseExtra(r.args, 1, 'attach [DATASET]');
    const mode = r.mode === undefined ? undefined : parseMode(r.mode, '--mode');
    const agent = await resolveAgent(client, ref);
    const datasetId = r.args[0] ?? (await targetDatasetId(s, client));
    const done = await client.attachDataset(agent.id, { datasetId, ...(mode === undefined ? {} : { mode }) });
    report(s.ctx, r, agent, done, `dataset ${done.id} is attached to agent ${agent.label}, in ${done.mode} mode`);
    return;
  }
  if (action === 'mode') {
    if (r.mode !== undefined)
      throw new KbsyncError('usage', '`mode` takes the mode as its argument: `kbsync agents datasets AGENT mode MODE [DATASET]`');
    if (r.args.length === 0) throw new KbsyncError('usage', `\`mode\` needs the mode: ${MODES.join(' or ')}`);
    refuseExtra(r.args, 2, 'mode MODE [DATASET]');
    const mode = parseMode(r.args[0] as string, 'the mode');
    const agent = await resolveAgent(client, ref);
    const datasetId = r.args[1] ?? (await targetDatasetId(s, client));
    const done = await client.setDatasetMode(agent.id, datasetId, mode);
    report(s.ctx, r, agent, done, `agent ${agent.label} uses dataset ${done.id} in ${done.mode} mode`);
    return;
  }
  throw new KbsyncError(
    'usage',
    `unknown action "${action}" of \`kbsync agents datasets AGENT\`: list, attach [DATASET] or mode MODE [DATASET]`,
  );
}

function report(
  ctx: CliContext,
  r: Json,
  agent: { id: string; name: string | null },
  dataset: { id: string; mode: DatasetMode },
  text: string,
): void {
  if (r.json === true) writeJson(ctx, { agent: { id: agent.id, name: agent.name }, dataset });
  else writeLines(ctx, text);
}

/** The dataset the config targets: its id when the config names one (or the embedded one), else the key's own. */
async function targetDatasetId(s: Session, client: KnowledgeClient): Promise<string> {
  const target = await s.getTarget();
  return target.datasetId ?? (await client.getDataset()).id;
}

function parseMode(value: string, what: string): DatasetMode {
  if ((MODES as readonly string[]).includes(value)) return value as DatasetMode;
  throw new KbsyncError('usage', `${what}: ${MODES.join(' or ')}, got "${value}"`);
}

function refuseExtra(args: readonly string[], max: number, usage: string): void {
  if (args.length > max)
    throw new KbsyncError('usage', `too many arguments (${args.slice(max).join(' ')}): \`kbsync agents datasets AGENT ${usage}\``);
}

/** A name as a shell word, quoted when it needs it. */
function quoteArg(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
