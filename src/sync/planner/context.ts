import { maxFileBytesFor, SPEC_UPLOAD_COST, type Plan, type UploadCostRule } from '../../shared/plans.js';
import type { ObservedFile, PlanInput, TrackedFile } from '../types.js';

/** The settings every planning step reads, derived once from PlanInput. */
export type PlanContext = {
  plan: Plan;
  planMaxFileBytes: number;
  /** min(plan limit, limits.maxFileBytes). */
  maxFileBytes: number;
  /** True when limits.maxFileBytes is the binding limit (it is below the plan's). */
  limitFromSetting: boolean;
  maxReprocessAttempts: number;
  multiSource: boolean;
  uploadCost: UploadCostRule;
};

/** An observed file whose content is not (or not surely) in the dataset: upload unless something cheaper fits. */
export type Candidate = {
  file: ObservedFile;
  sha256: string;
  remoteName: string;
  tracked: TrackedFile | undefined;
  /** new: never tracked; changed: tracked with other content; not-in-dataset: tracked, same content, no remote copy. */
  kind: 'new' | 'changed' | 'not-in-dataset';
};

/** Derives the planning settings from the input. */
export function contextOf(input: PlanInput): PlanContext {
  const planMax = maxFileBytesFor(input.plan);
  const setting = input.limits.maxFileBytes;
  const fromSetting = setting !== null && setting < planMax;
  return {
    plan: input.plan,
    planMaxFileBytes: planMax,
    maxFileBytes: fromSetting ? setting : planMax,
    limitFromSetting: fromSetting,
    maxReprocessAttempts: input.maxReprocessAttempts,
    multiSource: input.multiSource,
    uploadCost: input.uploadCost ?? SPEC_UPLOAD_COST,
  };
}
