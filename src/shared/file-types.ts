/** The file types the spec supports (section 4.3), by lowercase extension without the dot. */
export const SUPPORTED_EXTENSIONS = ['docx', 'txt', 'md', 'csv', 'json', 'jsonl', 'tsv', 'html', 'xml', 'xlsx', 'xls', 'parquet'] as const;

const SUPPORTED = new Set<string>(SUPPORTED_EXTENSIONS);

/**
 * The document types kbsync converts to Markdown before upload (`convert:` in kbsync.yaml), each
 * named by its lowercase extension. None is a type the service takes, so a path's remote name can
 * say whether it is a conversion: `q3.pdf` goes up as `q3.pdf.md`.
 */
export const CONVERT_TYPES = ['pdf', 'pptx', 'doc', 'odt', 'ods', 'odp', 'rtf', 'epub'] as const;
export type ConvertType = (typeof CONVERT_TYPES)[number];
const CONVERTIBLE = new Set<string>(CONVERT_TYPES);

/** The convert type of a lowercase extension (as extensionOf gives it), or null. */
export function convertTypeOfExtension(ext: string): ConvertType | null {
  return CONVERTIBLE.has(ext) ? (ext as ConvertType) : null;
}

/** The convert type of a path by its extension, or null. */
export function convertTypeOf(path: string): ConvertType | null {
  return convertTypeOfExtension(extensionOf(path));
}

/** The lowercase extension of a file name ("" when it has none). */
export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
}

/** True when the service accepts files with this name's extension (case-insensitive). */
export function isSupportedFileName(name: string): boolean {
  return SUPPORTED.has(extensionOf(name));
}

/** True when a lowercase extension (without the dot, as extensionOf gives it) is a supported type. */
export function isSupportedExtension(ext: string): boolean {
  return SUPPORTED.has(ext);
}
