import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { loadCommandConfig } from '../config-option.js';
import { writeJson } from '../output.js';

/** `kbsync config check [--json]`: validate the config and print it resolved, secrets redacted. */
export function register(program: Command, ctx: CliContext): void {
  const config = program.command('config').description('check the config file');
  config
    .command('check')
    .description('validate the config and print it resolved (absolute paths, defaults, secrets redacted); exit 2 on any problem')
    .option('--json', 'print the resolved config as JSON')
    .action(async (options: { json?: boolean }, cmd: Command) => {
      const loaded = await loadCommandConfig(cmd, ctx);
      const { redactConfig } = await import('../../config/redact.js');
      const { configPath, baseDir, ...rest } = redactConfig(loaded.config, loaded.interpolations);
      const redacted = { configPath, baseDir, ...rest };
      if (options.json === true) {
        writeJson(ctx, redacted);
        return;
      }
      const { toYaml } = await import('../../config/yaml-source.js');
      ctx.stdout.write(`# ${loaded.config.configPath}: OK (resolved; secrets redacted)\n${toYaml(redacted)}`);
    });
}
