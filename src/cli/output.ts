import type { CliContext } from './context.js';

/** Writes one JSON document (a command's `--json` report) to stdout. */
export function writeJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes lines of text for people to stdout. */
export function writeLines(ctx: CliContext, ...lines: string[]): void {
  ctx.stdout.write(`${lines.join('\n')}\n`);
}

/** Bytes gathered before each write to stdout (a chunk that cannot fit gets a buffer of its own). */
const SCRATCH_BYTES = 256 * 1024;

/**
 * Writes a document that comes in chunks (a large `--json` report) to stdout: text, or UTF-8 bytes
 * made elsewhere (each chunk of bytes whole characters), in order.
 */
export function writeChunks(ctx: CliContext, chunks: Iterable<string | Uint8Array>): void {
  if (ctx.stdout !== process.stdout) {
    for (const chunk of chunks)
      ctx.stdout.write(typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8'));
    return;
  }
  const out = process.stdout;
  // A string written to a stream is measured first (Buffer.byteLength: one slow pass over every
  // character, ~110M instructions for a 30 MB report), then encoded. Encoded here into a buffer
  // of the largest size it can need, it takes only the encoding (a SIMD pass).
  let scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  let used = 0;
  const flush = (): void => {
    if (used === 0) return;
    out.write(scratch.subarray(0, used));
    used = 0;
    // Still queued (a pipe its reader has not emptied): the stream holds the buffer, so the next bytes get a new one.
    if (out.writableLength > 0) scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  };
  for (const chunk of chunks) {
    if (typeof chunk === 'string') {
      const most = chunk.length * 3;
      if (used + most > scratch.length) {
        flush();
        if (most > scratch.length) scratch = Buffer.allocUnsafeSlow(most);
      }
      used += scratch.write(chunk, used);
    } else if (used + chunk.length <= scratch.length) {
      scratch.set(chunk, used);
      used += chunk.length;
    } else {
      flush();
      // Bytes nobody changes afterwards: the stream may hold them as they are.
      if (chunk.length > scratch.length) out.write(chunk);
      else {
        scratch.set(chunk, 0);
        used = chunk.length;
      }
    }
  }
  flush();
}
