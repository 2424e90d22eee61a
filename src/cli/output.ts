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
  if (ctx.stdout !== process.stdout) {
    for (const chunk of chunks) ctx.stdout.write(chunk);
    return;
  }
  const out = process.stdout;
  let scratch: Buffer | null = null;
  for (const chunk of chunks) {
    // A string written to a stream has its byte length counted first (Buffer.byteLength: one slow pass
    // over every character, a cost a large report feels), then encoded. Encoded here into a buffer
    // of the largest size it can need, it takes only the encoding (a SIMD pass).
    if (scratch === null || scratch.length < chunk.length * 3) scratch = Buffer.allocUnsafe(chunk.length * 3);
    out.write(scratch.subarray(0, scratch.write(chunk, 0)));
    // Still queued (a pipe its reader has not emptied): the stream holds the buffer, so the next chunk gets a new one.
    if (out.writableLength > 0) scratch = null;
  }
}
