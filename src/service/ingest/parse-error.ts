import { KbsyncError } from '../../shared/errors.js';

/** The error a parser throws for bad input: its message is shown to the user as the file's `error`. */
export function parseFailed(message: string, cause?: unknown): KbsyncError {
  return new KbsyncError('parse_failed', message, cause === undefined ? undefined : { cause });
}
