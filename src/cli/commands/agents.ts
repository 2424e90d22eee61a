import type { Command } from 'commander';
import { addConfigOptions, collectKey, type AgentConfigOptions } from '../agents/config-options.js';
import type { CliContext } from '../context.js';
import { withGuestSession, withSession } from '../session.js';

type Json = { json?: boolean };

const AGENT_ARG = 'the agent id or name';

/**
 * `kbsync agents list | create NAME | show AGENT | config AGENT | datasets AGENT [list|attach|mode]`: the
 * dataset's agents, on the embedded target or a remote one. create (5 credits) and config (2 credits) go
 * through the outbox and the budget like every paid call; the rest is free. The actions are in ../agents/.
 */
export function register(program: Command, ctx: CliContext): void {
  const agents = program
    .command('agents')
    .description('list, create, show and configure the agents of the dataset, and their datasets')
    .addHelpText('after', '\nAn agent is named by its id or its name. create costs 5 credits, config 2; the rest is free.');

  agents
    .command('list')
    .description('the agents the dataset sees (free)')
    .option('--json', 'print {"agents": [{id, name, config, createdAt}]}')
    .action(async (options: Json, cmd: Command) => {
      const { listAgents } = await import('../agents/actions.js');
      await withSession(cmd, ctx, (s) => listAgents(s, options), { lock: false });
    });

  addConfigOptions(
    agents
      .command('create')
      .description('create an agent attached to the dataset in read_only mode (costs 5 credits)')
      .argument('<name>', "the agent's name (unique among the dataset's agents)"),
  )
    .option('--json', 'print {"agent": {id, name, config, createdAt, datasets}, "credits"}')
    .action(async (name: string, options: AgentConfigOptions & Json, cmd: Command) => {
      const { createAgent } = await import('../agents/actions.js');
      await withGuestSession(cmd, ctx, (s) => createAgent(s, name, options));
    });

  agents
    .command('show')
    .description('one agent: its config and its datasets (free)')
    .argument('<agent>', AGENT_ARG)
    .option('--json', 'print {"agent": {id, name, config, createdAt, datasets}}')
    .action(async (ref: string, options: Json, cmd: Command) => {
      const { showAgent } = await import('../agents/actions.js');
      await withSession(cmd, ctx, (s) => showAgent(s, ref, options), { lock: false });
    });

  addConfigOptions(
    agents
      .command('config')
      .description("change an agent's config keys; the others are kept (costs 2 credits; nothing when nothing changes)")
      .argument('<agent>', AGENT_ARG),
  )
    .option('--unset <key>', 'remove a config key (repeatable)', collectKey)
    .option('--json', 'print {"agent": {...}, "changed", "credits"}')
    .action(async (ref: string, options: AgentConfigOptions & Json, cmd: Command) => {
      const { configureAgent } = await import('../agents/actions.js');
      await withGuestSession(cmd, ctx, (s) => configureAgent(s, ref, options));
    });

  agents
    .command('datasets')
    .description("an agent's datasets: list them, attach one, or set one's mode (free)")
    .argument('<agent>', AGENT_ARG)
    .argument('[action]', 'list (default), attach [DATASET], or mode read_only|self_learning [DATASET]')
    .argument('[args...]', "the action's arguments; DATASET defaults to the target's dataset")
    .option('--mode <mode>', 'with attach: read_only or self_learning (default read_only for a new attachment)')
    .option('--json', 'print {"agent": {id, name}, "datasets": [...]} (list) or {"agent", "dataset": {id, mode}}')
    .action(async (ref: string, action: string | undefined, args: string[], options: Json & { mode?: string }, cmd: Command) => {
      const { agentDatasets } = await import('../agents/actions.js');
      await withSession(cmd, ctx, (s) => agentDatasets(s, ref, { action, args, ...options }), { lock: false });
    });
}
