import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import { originLabel } from '../result-origin.js';
import { withSession } from '../session.js';

/** `kbsync chat AGENT TEXT`: ask an agent; the answer comes from the dataset, with its sources (1 credit, recorded and admitted against the budget first). */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('chat')
    .description('ask an agent of the dataset (costs 1 credit); prints the answer and its sources')
    .argument('<agent>', 'the agent id')
    .argument('<text...>', 'the message')
    .option('--json', 'print {"response", "sources"} as JSON')
    .action(async (agent: string, words: string[], options: { json?: boolean }, cmd: Command) => {
      await withSession(cmd, ctx, async ({ getClient, state, config }) => {
        const { paidCall, capsOf } = await import('../../sync/executor/index.js');
        const client = await getClient();
        const text = words.join(' ');
        const answer = await paidCall(state, capsOf(config), {
          kind: 'chat',
          reason: `chat with agent ${agent}: "${text}"`,
          perform: async (idempotencyKey) => ({ value: await client.chat(agent, text, { idempotencyKey }), creditsCharged: null }),
        });
        if (options.json === true) {
          writeJson(ctx, answer);
          return;
        }
        writeLines(ctx, answer.response);
        if (answer.sources.length > 0) {
          writeLines(
            ctx,
            '',
            'sources:',
            ...answer.sources.map(
              (s) => `  source ${s.knowledgeSourceId} chunk ${s.chunkIndex} (score ${s.score.toFixed(3)})${originLabel(s.origin)}`,
            ),
          );
        }
      });
    });
}
