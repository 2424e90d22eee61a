/** The file types the spec supports (section 4.3), by lowercase extension without the dot. */
export const SUPPORTED_EXTENSIONS = ['docx', 'txt', 'md', 'csv', 'json', 'jsonl', 'tsv', 'html', 'xml', 'xlsx', 'xls', 'parquet'] as const;

const SUPPORTED = new Set<string>(SUPPORTED_EXTENSIONS);

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
