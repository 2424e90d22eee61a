/**
 * Every error kbsync raises on purpose carries a stable `code`; user text and exit codes are
 * derived from the code in one place (src/cli/exit.ts), never from the message.
 */
export type ErrorCode =
  // config and usage
  | 'config_invalid'
  | 'config_not_found'
  | 'usage'
  // API (the service's table in docs/api.md, plus transport-level codes)
  | 'invalid_request'
  | 'unauthorized'
  | 'insufficient_credits'
  | 'tier_required'
  | 'mode_forbidden'
  | 'forbidden'
  | 'not_found'
  | 'limit_reached'
  | 'idempotency_in_progress'
  | 'file_too_large'
  | 'unsupported_file_type'
  | 'validation_failed'
  | 'idempotency_mismatch'
  | 'rate_limited'
  | 'internal'
  // the local service's one addition to docs/api.md's table (docs/service.md)
  | 'method_not_allowed'
  | 'network'
  | 'timeout'
  | 'non_json_response'
  | 'unknown_outcome'
  | 'unexpected_response'
  // sync side
  | 'state_locked'
  | 'state_corrupt'
  | 'state_unavailable'
  | 'state_write_failed'
  | 'state_version'
  | 'state_conflict'
  | 'source_unavailable'
  | 'git_failed'
  | 'budget_exhausted'
  | 'file_changed'
  // local service: ingest and chat
  | 'parse_failed'
  | 'llm_failed'
  | 'embeddings_failed'
  // anything kbsync did not expect (a bug): src/cli/exit.ts reports it with this code
  | 'internal_error';

/** Base class: a stable code, a human message, and always the cause when there is one. */
export class KbsyncError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KbsyncError';
    this.code = code;
  }
}

/** True when `err` is a KbsyncError (optionally with one of the given codes). */
export function isKbsyncError(err: unknown, ...codes: ErrorCode[]): err is KbsyncError {
  return err instanceof KbsyncError && (codes.length === 0 || codes.includes(err.code));
}

/** An error as one line of text ("EACCES: permission denied, scandir '/x'"), whatever was thrown. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
