import type { ConvertResult, ConvertSkip } from './types.js';

/** A document that cannot be converted, thrown inside a converter and returned as its result (never past it). */
export class ConvertFailure extends Error {
  readonly skip: ConvertSkip;
  readonly reason: string;
  constructor(skip: ConvertSkip, reason: string) {
    super(reason);
    this.skip = skip;
    this.reason = reason;
  }
}

export const failed = (reason: string): ConvertFailure => new ConvertFailure('convert-failed', reason);
export const encrypted = (reason: string): ConvertFailure => new ConvertFailure('encrypted', reason);

const MIB = 1_048_576;

/** The format's name with its article as read aloud ("a PPTX", "an ODT", "an RTF"). */
export const aFormat = (format: string): string => `${/^[AEFHILMNORSX]/.test(format) ? 'an' : 'a'} ${format}`;

/** A byte count for a person: "512 MiB", "3.5 KiB". */
export function sizeText(bytes: number): string {
  if (bytes >= MIB) return `${Number((bytes / MIB).toFixed(1))} MiB`;
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  return `${bytes} bytes`;
}

/**
 * Runs one conversion and turns whatever it throws into a result: a ConvertFailure as it says, a stack
 * overflow or an allocation failure as the limit it is, anything else as a damaged `format` file.
 */
export async function guarded(format: string, bytes: Uint8Array, convert: () => Promise<ConvertResult>): Promise<ConvertResult> {
  if (bytes.length === 0) return { ok: false, skip: 'convert-failed', reason: `the file is empty (0 bytes): it is not ${aFormat(format)}` };
  try {
    return await convert();
  } catch (err) {
    if (err instanceof ConvertFailure) return { ok: false, skip: err.skip, reason: err.reason };
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof RangeError && /call stack/i.test(message)) {
      return { ok: false, skip: 'convert-failed', reason: `the ${format} file nests too deeply to read (the converter's stack ran out)` };
    }
    return { ok: false, skip: 'convert-failed', reason: `the ${format} file is damaged or not a ${format} file (${message})` };
  }
}
