/** The document types kbsync converts to Markdown before upload (`convert:` in kbsync.yaml). */
export const CONVERT_TYPES = ['pdf', 'pptx', 'doc', 'odt', 'ods', 'odp', 'rtf', 'epub'] as const;
export type ConvertType = (typeof CONVERT_TYPES)[number];

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
