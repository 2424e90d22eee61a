import type { CliContext } from './context.js';

/** Writes one JSON document (a command's `--json` report) to stdout. */
export function writeJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes lines of text for people to stdout. */
export function writeLines(ctx: CliContext, ...lines: string[]): void {
  ctx.stdout.write(`${lines.join('\n')}\n`);
}
