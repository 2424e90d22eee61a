import type { Source } from './schema.js';

/** True for a source whose files become intelligence entries (`as: intelligence`), not uploads. */
export function isIntelligenceSource(source: Source): boolean {
  return source.as === 'intelligence';
}

/**
 * The names of the sources whose files are uploaded: they alone decide the remote file names
 * (`source/path` when there are several), so adding an intelligence source renames no uploaded file.
 */
export function fileSourceNames(sources: readonly Source[]): string[] {
  return sources.filter((s) => !isIntelligenceSource(s)).map((s) => s.name);
}
