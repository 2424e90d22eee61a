import type { CliContext } from './context.js';

/** Writes one JSON document (a command's `--json` report) to stdout. */
export function writeJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes lines of text for people to stdout. */
export function writeLines(ctx: CliContext, ...lines: string[]): void {
  ctx.stdout.write(`${lines.join('\n')}\n`);
}

/** Writes a document that comes in chunks (a large `--json` report) to stdout, one chunk at a time. */
export function writeChunks(ctx: CliContext, chunks: Iterable<string>): void {
  for (const chunk of chunks) ctx.stdout.write(chunk);
}
