import type { Command } from 'commander';
import { fileSourceNames } from '../../config/source-kinds.js';
import { resolveAgent } from '../agents/resolve.js';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import { originLabel } from '../result-origin.js';
import { withGuestSession } from '../session.js';
import { nameResults, sourceLabel } from '../source-names.js';

/**
 * `kbsync chat AGENT TEXT`: ask an agent, by id or name; the answer comes from the dataset, with its
 * sources named by path (1 credit, recorded and admitted against the budget first).
 */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('chat')
    .description('ask an agent of the dataset (costs 1 credit); prints the answer and its sources')
    .argument('<agent>', 'the agent id or name (kbsync agents list)')
    .argument('<text...>', 'the message')
    .option('--json', 'print {"response", "agent", "sources": [{text, score, knowledgeSourceId, chunkIndex, source, path}]} as JSON')
    .action(async (agentRef: string, words: string[], options: { json?: boolean }, cmd: Command) => {
      await withGuestSession(cmd, ctx, async ({ getClient, state, config, logger }) => {
        const { paidCall, capsOf } = await import('../../sync/executor/index.js');
        const client = await getClient();
        const agent = await resolveAgent(client, agentRef);
        const text = words.join(' ');
        const answer = await paidCall(state, capsOf(config), {
          kind: 'chat',
          reason: `chat with agent ${agent.label}: "${text}"`,
          perform: async (idempotencyKey) => ({ value: await client.chat(agent.id, text, { idempotencyKey }), creditsCharged: null }),
        });
        const sourceNames = fileSourceNames(config.sources);
        const sources = await nameResults(answer.sources, { state, sourceNames, client, logger });
        if (options.json === true) {
          writeJson(ctx, { response: answer.response, agent: { id: agent.id, name: agent.name }, sources });
          return;
        }
        writeLines(ctx, answer.response);
        if (sources.length > 0) {
          writeLines(
            ctx,
            '',
            'sources:',
            ...sources.map((s) => `  ${sourceLabel(s)} (score ${s.score.toFixed(3)})${originLabel(s.origin)}`),
          );
        }
      });
    });
}
