import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import * as commands from './commands/index.js';
import { CONFIG_OPTION_HELP } from './config-option.js';
import type { CliContext } from './context.js';

/** The signature every `src/cli/commands/<name>.ts` exports as `register`. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

const EXIT_CODES_HELP = `
Exit codes: 0 done or nothing to do, 1 some items failed, 2 usage or config error,
3 stopped by the budget or a limit with work left, 4 the remote refused us, 5 internal error.
Config keys: docs/config.md. Errors: docs/errors.md. KBSYNC_DEBUG=1 shows stacks.`;

/** The commander program with global options and every command registered; it never exits the process. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('kbsync')
    .description('Keep a knowledge-service dataset in step with your folders and Git repositories.')
    .version(packageVersion(), '-V, --version', 'print the kbsync version')
    .option('-c, --config <file>', CONFIG_OPTION_HELP)
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({ writeOut: (text) => ctx.stdout.write(text), writeErr: (text) => ctx.stderr.write(text) })
    .showHelpAfterError('(run "kbsync --help" for usage)')
    .addHelpText('after', EXIT_CODES_HELP);
  const registrations: Record<string, RegisterCommand> = commands;
  for (const register of Object.values(registrations)) register(program, ctx);
  return program;
}

/** Set by scripts/bundle.js to package.json's version; undefined when running from src/ or dist/cli. */
declare const KBSYNC_BUNDLED_VERSION: string | undefined;

/**
 * The version in package.json: written into the bundle when it is built (reading the file cost every
 * command start-up time), else read from two folders up (src/cli and dist/cli).
 */
export function packageVersion(): string {
  if (typeof KBSYNC_BUNDLED_VERSION === 'string') return KBSYNC_BUNDLED_VERSION;
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return String((JSON.parse(text) as { version?: unknown }).version ?? '0.0.0');
}
