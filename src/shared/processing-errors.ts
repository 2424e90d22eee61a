/**
 * The stable code the local service writes at the start of a file's processing `error`
 * ("parse_failed: not a valid DOCX file: ..."), and whether reprocessing the same bytes can help.
 * The hosted service writes no code: its errors are "unknown", and the sync engine treats them as it
 * always has (reprocessed up to upload.maxReprocessAttempts).
 */
export const PROCESSING_ERROR_CODES = {
  /** The file is corrupt, unreadable or refused (too large once inflated, an entity bomb): the same bytes fail again. */
  parse_failed: 'permanent',
  /** The service has no parser for the file's type. */
  unsupported_type: 'permanent',
  /** The service lost its stored copy: only a new upload helps. */
  file_missing: 'permanent',
  /** A fault of the service (a read error, a bug): a retry may succeed. */
  internal: 'transient',
} as const;

export type ProcessingErrorCode = keyof typeof PROCESSING_ERROR_CODES;
export type ProcessingErrorClass = 'permanent' | 'transient' | 'unknown';

/** The `error` text for a failure: its code, a colon, the reason. */
export function processingError(code: ProcessingErrorCode, message: string): string {
  return `${code}: ${message}`;
}

const CODE_AT_START = /^([a-z][a-z_]*): /;

/** Whether a reprocess can help: by the code at the start of `error`; "unknown" without a known code. */
export function processingErrorClass(error: string | null | undefined): ProcessingErrorClass {
  const code = error == null ? undefined : CODE_AT_START.exec(error)?.[1];
  if (code === undefined || !Object.hasOwn(PROCESSING_ERROR_CODES, code)) return 'unknown';
  return PROCESSING_ERROR_CODES[code as ProcessingErrorCode];
}
