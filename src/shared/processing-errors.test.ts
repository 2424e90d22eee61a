import { describe, expect, it } from 'vitest';
import { processingError, processingErrorClass } from './processing-errors.js';

describe('processingErrorClass', () => {
  it.each([
    ['parse_failed: not a valid DOCX file: the ZIP archive is truncated', 'permanent'],
    ['unsupported_type: no parser for .rtf files', 'permanent'],
    ['file_missing: the stored copy of the file is missing; upload it again', 'permanent'],
    ['internal: internal error while processing the file', 'transient'],
    // The hosted service's errors carry no code: unknown, treated as before (reprocessed).
    ['Processing failed', 'unknown'],
    ['not a valid DOCX file: parse_failed: later in the text', 'unknown'],
    ['parse_failed:no space after the colon', 'unknown'],
    ['Parse_failed: another case', 'unknown'],
    ['constructor: a key of Object.prototype', 'unknown'],
    ['quota: a code this kbsync does not know', 'unknown'],
    ['', 'unknown'],
    [null, 'unknown'],
    [undefined, 'unknown'],
  ] as const)('%j → %s', (error, expected) => {
    expect(processingErrorClass(error)).toBe(expected);
  });

  it('reads back the code processingError writes', () => {
    expect(processingError('parse_failed', 'bad zip')).toBe('parse_failed: bad zip');
    expect(processingErrorClass(processingError('parse_failed', 'bad zip'))).toBe('permanent');
    expect(processingErrorClass(processingError('internal', 'EIO'))).toBe('transient');
  });
});
