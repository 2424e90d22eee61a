import type { ConvertType } from '../shared/file-types.js';

export { CONVERT_TYPES, type ConvertType } from '../shared/file-types.js';

/**
 * Each converter's version: raised when its output for the same bytes changes, so that files it
 * converted before are converted again and a changed Markdown is planned as a change.
 */
export const CONVERTER_VERSIONS: Record<ConvertType, number> = { pdf: 1, pptx: 1, doc: 1, odt: 1, ods: 1, odp: 1, rtf: 1, epub: 1 };

/** Limits one conversion runs under (besides the worker's time and memory limits, which the caller sets). */
export type ConvertLimits = {
  /** Most bytes a container (zip) may expand to in all. */ maxExpandedBytes: number;
  /** Most entries a zip may hold. */ maxEntries: number;
  /** Deepest nesting of elements (XML) or groups (RTF) read. */ maxDepth: number;
  /** Most characters of Markdown written; past it the conversion fails naming the limit. */ maxOutputChars: number;
};
export const DEFAULT_CONVERT_LIMITS: ConvertLimits = {
  maxExpandedBytes: 512 * 1024 * 1024,
  maxEntries: 20_000,
  maxDepth: 256,
  maxOutputChars: 64 * 1024 * 1024,
};

/** Why a document was not converted: each becomes a plan line that costs nothing. */
export type ConvertSkip = 'encrypted' | 'no-text' | 'convert-failed';

export type ConvertResult =
  | { ok: true; markdown: string; /** pages, slides, sheets or chapters converted */ units: number }
  | { ok: false; skip: ConvertSkip; /** one sentence for a person, naming the part that failed */ reason: string };

export type Converter = (bytes: Uint8Array, o: { name: string; limits: ConvertLimits }) => Promise<ConvertResult>;
