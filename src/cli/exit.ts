import { ConfigError, formatProblem } from '../config/errors.js';
import { errorText, KbsyncError, type ErrorCode } from '../shared/errors.js';
import type { CliContext } from './context.js';
import { ERROR_TABLE } from './error-table.js';

/** kbsync's exit codes; docs/errors.md lists them. */
export const EXIT = {
  /** Done, or nothing to do. */
  ok: 0,
  /** Some items failed. */
  itemsFailed: 1,
  /** Usage or config error. */
  usage: 2,
  /** Stopped by the budget or a limit with work left. */
  stopped: 3,
  /** The remote refused us (auth, credits exhausted on the server, tier, a rate limit retries did not get past). */
  refused: 4,
  /** Internal error (a bug). */
  internal: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code for an error that ended a command: from its code, or 5 for anything unexpected. */
export function exitCodeFor(err: unknown): ExitCode {
  return err instanceof KbsyncError ? ERROR_TABLE[err.code].exit : EXIT.internal;
}

/**
 * The exit code of a run that ended without an exception (plan, sync, watch's first pass):
 * 1 when any item failed, else 3 when the budget or a limit left work queued, else 0.
 */
export function exitCodeForRun(summary: { failed: number; deferred: number }): ExitCode {
  if (summary.failed > 0) return EXIT.itemsFailed;
  if (summary.deferred > 0) return EXIT.stopped;
  return EXIT.ok;
}

/**
 * Turns an error that ended a command into text for people (stderr) and, with --json, one JSON
 * document on stdout; returns the exit code. The only place errors become user text.
 */
export function reportError(err: unknown, ctx: CliContext, options: { json: boolean }): ExitCode {
  const exitCode = exitCodeFor(err);
  const debug = ctx.env.KBSYNC_DEBUG === '1';
  if (err instanceof ConfigError) {
    const noun = err.problems.length === 1 ? 'problem' : 'problems';
    ctx.stderr.write(`${err.problems.map((p) => formatProblem(err.file, p)).join('\n')}\n`);
    ctx.stderr.write(`kbsync: ${err.problems.length} ${noun} in ${err.file} (keys: docs/config.md; re-check with "kbsync config check")\n`);
  } else if (err instanceof KbsyncError) {
    ctx.stderr.write(`kbsync: ${err.message}\n`);
    const { action } = ERROR_TABLE[err.code];
    if (action !== '') ctx.stderr.write(`  ${action}\n`);
  } else {
    ctx.stderr.write(`kbsync: internal error: ${errorText(err)}\n`);
    ctx.stderr.write(`  ${ERROR_TABLE.internal_error.action}\n`);
  }
  if (debug) ctx.stderr.write(`${debugDetail(err)}\n`);
  if (options.json) ctx.stdout.write(`${JSON.stringify({ error: errorDocument(err, exitCode) }, null, 2)}\n`);
  return exitCode;
}

export function errorDocument(err: unknown, exitCode: ExitCode): Record<string, unknown> {
  if (err instanceof ConfigError) return { code: err.code, exitCode, message: err.message, file: err.file, problems: err.problems };
  if (err instanceof KbsyncError) return { code: err.code, exitCode, message: err.message };
  const code: ErrorCode = 'internal_error';
  return { code, exitCode, message: errorText(err) };
}

/** The stack and the chain of causes (KBSYNC_DEBUG=1 only). */
function debugDetail(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && depth < 5; depth++) {
    parts.push(depth === 0 ? stackOf(current) : `caused by: ${stackOf(current)}`);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join('\n');
}

function stackOf(err: unknown): string {
  return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}
