import { CONVERTER_VERSIONS } from '../../convert/types.js';
import { CONVERT_TYPES, convertTypeOf, type ConvertType } from '../../shared/file-types.js';
import { bucketOf } from '../planner/index.js';
import type { StateStore } from '../state/index.js';
import type { RunItem } from '../types.js';
import type { StopReason } from './paid-ops.js';

/** The state's record of the converters' versions the tracked Markdown was made with. */
const META_KEY = 'convert.versions';

/**
 * The types whose converter changed since the state's documents were converted: their files are
 * converted again even when their bytes did not move, so a Markdown that changed is planned as a change.
 */
export function staleConvertTypes(state: StateStore): Set<ConvertType> {
  const stale = new Set<ConvertType>();
  let recorded: Partial<Record<ConvertType, number>>;
  try {
    recorded = JSON.parse(state.getMeta(META_KEY) ?? '{}') as Partial<Record<ConvertType, number>>;
  } catch {
    return new Set(CONVERT_TYPES);
  }
  for (const type of CONVERT_TYPES) if (recorded[type] !== undefined && recorded[type] !== CONVERTER_VERSIONS[type]) stale.add(type);
  return stale;
}

/**
 * Records the converters' versions once a run has sent every converted document it planned: until
 * then, a stale type's documents keep being converted again (from the cache, which is keyed by version).
 */
export function recordConverterVersions(state: StateStore, items: readonly RunItem[], stop: StopReason | null): void {
  if (stop !== null) return;
  for (const item of items) {
    if (convertTypeOf(item.path) === null) continue;
    const bucket = bucketOf(item);
    if (bucket === 'deferred' || bucket === 'failed') return;
  }
  const current = JSON.stringify(CONVERTER_VERSIONS);
  if (state.getMeta(META_KEY) !== current) state.setMeta(META_KEY, current);
}
