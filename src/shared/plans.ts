/** Plans, tiers, size limits and credit costs: the one table both the sync side and the local service read. */

export const PLANS = ['free', 'basic', 'pro', 'team', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export type Tier = 'basic' | 'advanced';

/** 1 MB as the spec counts it (docs/api.md, chosen): 1,048,576 bytes. */
export const MIB = 1_048_576;

const PLAN_TIER: Record<Plan, Tier> = {
  free: 'basic',
  basic: 'basic',
  pro: 'advanced',
  team: 'advanced',
  enterprise: 'advanced',
};

/** Maximum upload size per plan; team/enterprise are not stated by the spec (defaults, overridable). */
const PLAN_MAX_FILE_BYTES: Record<Plan, number> = {
  free: 100 * MIB,
  basic: 100 * MIB,
  pro: 500 * MIB,
  team: 500 * MIB,
  enterprise: 500 * MIB,
};

/** The tier a plan belongs to. */
export function tierOf(plan: Plan): Tier {
  return PLAN_TIER[plan];
}

/** True when the plan may use Advanced-tier operations (batch query, batch intelligence, reindex). */
export function isAdvancedPlan(plan: Plan): boolean {
  return PLAN_TIER[plan] === 'advanced';
}

/** The largest file the plan accepts, in bytes. */
export function maxFileBytesFor(plan: Plan): number {
  return PLAN_MAX_FILE_BYTES[plan];
}

/** Paid operations and their inputs. Everything not listed here is free. */
export type Operation =
  | { kind: 'upload'; bytes: number }
  | { kind: 'reprocess' }
  | { kind: 'reindex' }
  | { kind: 'query' }
  | { kind: 'query_batch'; queries: number }
  | { kind: 'chat' }
  | { kind: 'agent_create' }
  | { kind: 'agent_config' }
  | { kind: 'intelligence'; duplicate: boolean }
  | { kind: 'intelligence_batch'; newEntries: number };

/** An upload's price: `base`, plus `perMiB` for each started MiB over `includedMiB`. */
export type UploadCostRule = { base: number; perMiB: number; includedMiB: number };

/** docs/api.md's upload price (the spec's), which the local service charges. */
export const SPEC_UPLOAD_COST: UploadCostRule = { base: 5, perMiB: 1, includedMiB: 5 };

/** Upload cost under `rule` (docs/api.md's by default: 5 credits plus 1 per started MiB over 5 MiB). */
export function uploadCost(bytes: number, rule: UploadCostRule = SPEC_UPLOAD_COST): number {
  if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`upload size must be a non-negative number, got ${bytes}`);
  return rule.base + rule.perMiB * Math.max(0, Math.ceil((bytes - rule.includedMiB * MIB) / MIB));
}

/** The credit cost of one operation, exactly as docs/api.md states it. */
export function costOf(op: Operation): number {
  switch (op.kind) {
    case 'upload':
      return uploadCost(op.bytes);
    case 'reprocess':
      return 5;
    case 'reindex':
      return 2;
    case 'query':
    case 'chat':
      return 1;
    case 'query_batch':
      return op.queries;
    case 'agent_create':
      return 5;
    case 'agent_config':
      return 2;
    case 'intelligence':
      return op.duplicate ? 0 : 1;
    case 'intelligence_batch':
      return op.newEntries;
  }
}
