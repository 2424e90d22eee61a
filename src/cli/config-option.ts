import type { Command } from 'commander';
import { isAbsolute, resolve } from 'node:path';
import type { LoadedConfig } from '../config/load.js';
import type { CliContext } from './context.js';

/** The default of the global `-c, --config <file>` option. */
export const DEFAULT_CONFIG_FILE = './kbsync.yaml';

/** The config file named by the global `-c/--config` option: as given, and absolute against ctx.cwd. */
export function configPathOf(cmd: Command, ctx: CliContext): { given: string; absolute: string } {
  const given = String(cmd.optsWithGlobals().config ?? DEFAULT_CONFIG_FILE);
  return { given, absolute: isAbsolute(given) ? given : resolve(ctx.cwd, given) };
}

/**
 * Loads the command's config file (throws config_not_found or ConfigError, which exit.ts turns
 * into exit code 2). The loader is imported on first use so `kbsync --help` does not pay for it.
 */
export async function loadCommandConfig(cmd: Command, ctx: CliContext): Promise<LoadedConfig> {
  const { loadConfigDetailed } = await import('../config/load.js');
  return loadConfigDetailed(configPathOf(cmd, ctx).absolute, ctx.env);
}
