import { isStrictlyInPathOrder, pathOrderedFinder, trackedKey } from '../tracked/keys.js';
import type { ObservedFile } from '../types.js';

/** The observed file at a source and path, if the pass saw one. */
export type ObservedLookup = (source: string, path: string) => ObservedFile | undefined;

/**
 * Finds observed files by source and path. Files in path order (as the sources deliver them) are
 * searched where they are, with no key string and no Map entry per file (a 100k-file sync looks
 * each one up, in order); files in any other order go through a Map, made on the first lookup.
 * `inPathOrder`: the caller knows they are in order (Observation.inPathOrder), so they are not checked.
 */
export function observedLookup(files: readonly ObservedFile[], inPathOrder = false): ObservedLookup {
  if (inPathOrder || isStrictlyInPathOrder(files)) {
    const find = pathOrderedFinder(files);
    return (source, path) => {
      const at = find(source, path);
      return at < 0 ? undefined : files[at];
    };
  }
  let byKey: Map<string, ObservedFile> | undefined;
  return (source, path) => (byKey ??= new Map(files.map((f) => [trackedKey(f.source, f.path), f]))).get(trackedKey(source, path));
}
