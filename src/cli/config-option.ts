import type { Command } from 'commander';
import { statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { LoadedConfig } from '../config/load.js';
import { KbsyncError } from '../shared/errors.js';
import type { CliContext } from './context.js';

/** The config file's name: without `-c`, the nearest one from the working folder up is used. */
export const CONFIG_FILE_NAME = 'kbsync.yaml';

/** What the global `-c, --config <file>` option says when it is not given (its help text). */
export const CONFIG_OPTION_HELP = `config file (default: the nearest ${CONFIG_FILE_NAME} in the working folder or a folder above it, up to $HOME)`;

/** The config file of a command: as given (or found), absolute, and the folders searched when none was given. */
export type ConfigLocation = { given: string; absolute: string; searched: readonly string[] | null; found: boolean };

/**
 * The config file named by the global `-c/--config` option, absolute against ctx.cwd. Without it, the
 * nearest kbsync.yaml from ctx.cwd up (as git finds .git): `search: false` (init) takes the working
 * folder's.
 */
export function configPathOf(cmd: Command, ctx: CliContext, o: { search?: boolean } = {}): ConfigLocation {
  const option = cmd.optsWithGlobals().config as string | undefined;
  if (option !== undefined)
    return { given: option, absolute: isAbsolute(option) ? option : resolve(ctx.cwd, option), searched: null, found: true };
  const here = resolve(ctx.cwd, CONFIG_FILE_NAME);
  if (o.search === false) return { given: `./${CONFIG_FILE_NAME}`, absolute: here, searched: null, found: true };
  const { path, searched } = findConfigUp(ctx.cwd, ctx.env.HOME);
  if (path === null) return { given: `./${CONFIG_FILE_NAME}`, absolute: here, searched, found: false };
  return { given: relative(ctx.cwd, path) || CONFIG_FILE_NAME, absolute: path, searched, found: true };
}

/**
 * The nearest kbsync.yaml (a file) in `cwd` or a folder above it, and the folders looked in. The search
 * stops at the file-system root, or at `home` when `cwd` is inside it (a config above the home folder
 * belongs to no project of the user's).
 */
export function findConfigUp(cwd: string, home: string | undefined): { path: string | null; searched: string[] } {
  const top = home !== undefined && home !== '' ? resolve(home) : null;
  let dir = resolve(cwd);
  const stopAt = top !== null && (dir === top || dir.startsWith(top.endsWith(sep) ? top : top + sep)) ? top : null;
  const searched: string[] = [];
  for (;;) {
    searched.push(dir);
    const candidate = join(dir, CONFIG_FILE_NAME);
    if (isFile(candidate)) return { path: candidate, searched };
    const parent = dirname(dir);
    if (dir === stopAt || parent === dir) return { path: null, searched };
    dir = parent;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Loads the command's config file (throws config_not_found or ConfigError, which exit.ts turns
 * into exit code 2). The loader is imported on first use so `kbsync --help` does not pay for it.
 */
export async function loadCommandConfig(cmd: Command, ctx: CliContext): Promise<LoadedConfig> {
  const location = configPathOf(cmd, ctx);
  if (!location.found) throw notFound(location.searched ?? []);
  const { loadConfigDetailed } = await import('../config/load.js');
  return loadConfigDetailed(location.absolute, ctx.env);
}

/** No kbsync.yaml in any folder searched: the error names them, and where the search stopped. */
function notFound(searched: readonly string[]): KbsyncError {
  const last = searched[searched.length - 1] ?? '';
  const stop = dirname(last) === last ? 'the file-system root' : `${last} ($HOME)`;
  return new KbsyncError(
    'config_not_found',
    `no ${CONFIG_FILE_NAME} in ${searched[0] ?? ''} or a folder above it, up to ${stop} (looked in ${searched.join(', ')})`,
  );
}
