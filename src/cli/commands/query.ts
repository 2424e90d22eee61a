import { Option, type Command } from 'commander';
import { fileSourceNames } from '../../config/source-kinds.js';
import { KbsyncError } from '../../shared/errors.js';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import { originLabel } from '../result-origin.js';
import { withGuestSession } from '../session.js';
import { nameResults, sourceLabel } from '../source-names.js';

/**
 * `kbsync query TEXT`: semantic search on the target dataset (1 credit, recorded and admitted against the
 * budget first); each result named by its path (source-names.ts).
 */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('query')
    .description('semantic search on the target dataset (costs 1 credit)')
    .argument('<text...>', 'what to search for')
    .addOption(new Option('--top-k <n>', 'how many results (1-20)').default(5).argParser(parseTopK))
    .option('--json', 'print the results as JSON: {"results": [{text, score, knowledgeSourceId, chunkIndex, source, path}]}')
    .action(async (words: string[], options: { topK: number; json?: boolean }, cmd: Command) => {
      await withGuestSession(cmd, ctx, async ({ getClient, state, config, logger }) => {
        const { paidCall, capsOf } = await import('../../sync/executor/index.js');
        const client = await getClient();
        const text = words.join(' ');
        const answer = await paidCall(state, capsOf(config), {
          kind: 'query',
          reason: `query "${text}"`,
          perform: async (idempotencyKey) => ({
            value: await client.query({ query: text, topK: options.topK }, { idempotencyKey }),
            creditsCharged: null,
          }),
        });
        const sourceNames = fileSourceNames(config.sources);
        const results = await nameResults(answer, { state, sourceNames, client, logger });
        if (options.json === true) {
          writeJson(ctx, { results });
          return;
        }
        if (results.length === 0) writeLines(ctx, 'no results');
        for (const [i, r] of results.entries()) {
          writeLines(ctx, `${i + 1}. score ${r.score.toFixed(3)}  ${sourceLabel(r)}${originLabel(r.origin)}`, indent(r.text), '');
        }
      });
    });
}

/** Parses --top-k: a whole number from 1 to 20 (the service's limit). */
export function parseTopK(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new KbsyncError('usage', `--top-k: a whole number from 1 to 20, got "${value}"`);
  return n;
}

function indent(text: string): string {
  return text
    .trim()
    .split('\n')
    .map((line) => `   ${line}`)
    .join('\n');
}
