import { resolve } from 'node:path';
import type { Command } from 'commander';
import { isPostgresUrl } from '../../shared/state-url.js';
import type { CliContext } from '../context.js';
import { loadCommandConfig } from '../config-option.js';
import { writeJson } from '../output.js';

/** `kbsync state migrate --to DEST`: moves the config's state to PostgreSQL, or back to a file. */
export function register(program: Command, ctx: CliContext): void {
  const state = program.command('state').description('move the sync state between a file and PostgreSQL');
  state
    .command('migrate')
    .description(
      "copy the config's state (its `state:`) to DEST: postgres://USER@HOST:PORT/DB (an empty database) or a new state file; then point `state:` at DEST",
    )
    .requiredOption('--to <dest>', 'where to: a postgres:// URL, or the path of a new state file')
    .option('--json', 'print {"from", "to", "counts"} as JSON')
    .action(async (options: { to: string; json?: boolean }, cmd: Command) => {
      const { config } = await loadCommandConfig(cmd, ctx);
      const { migrateState } = await import('../../sync/state/migrate-state.js');
      const to = isPostgresUrl(options.to) ? options.to : resolve(ctx.cwd, options.to);
      const scope = config.sources
        .map((s) => s.name)
        .sort()
        .join(',');
      const report = migrateState(config.state, to, scope);
      if (options.json === true) {
        writeJson(ctx, report);
        return;
      }
      const counts = Object.entries(report.counts)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ');
      ctx.stdout.write(`migrated ${report.from} -> ${report.to}: ${counts}\nnow set \`state: ${report.to}\` in ${config.configPath}\n`);
    });
}
