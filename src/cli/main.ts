import { CommanderError, type Command } from 'commander';
import { createContext, type CliContext } from './context.js';
import { EXIT, reportError } from './exit.js';
import { buildProgram } from './program.js';

/** The one-shot commands that hold a whole tree's files, plan items or rows in memory. */
const HOLDS_A_TREE: ReadonlySet<string> = new Set(['plan', 'sync', 'status', 'audit', 'check', 'explain']);

/**
 * Runs kbsync with `argv` shaped like process.argv (node, script, ...args) and returns the exit
 * code; never calls process.exit. `context` replaces the process streams, env or cwd (tests).
 */
export async function main(argv: readonly string[], context: Partial<CliContext> = {}): Promise<number> {
  const ctx = createContext(context);
  const program = buildProgram(ctx);
  let active: Command | undefined;
  program.hook('preAction', async (_program, actionCommand) => {
    active = actionCommand;
    // What a large tree's walk and plan allocate they mostly keep to the end: V8's own heap growth
    // leaves the heap far above what is in use, and the peak RSS of a million-file plan with it.
    if (HOLDS_A_TREE.has(actionCommand.name())) (await import('../service/memory.js')).keepHeapSmall();
  });
  try {
    await program.parseAsync([...argv], { from: 'node' });
    return ctx.exitCode;
  } catch (err) {
    // Commander has already printed its own message (unknown command, option, help).
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return reportError(err, ctx, { json: active?.opts().json === true });
  }
}
