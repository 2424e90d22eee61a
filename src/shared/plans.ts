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

/**
 * Every paid call the client makes and the service charges, with its price and how the outbox records it.
 * The one list: `Operation` (costOf's input), the outbox kinds (sync/state/state-types.ts) and the kinds a
 * command pays for on its own (sync/executor/paid-call.ts) are derived from it.
 * - `cost`: the credits, exactly as docs/api.md states them; its argument is what the price depends on.
 * - `row`: the shape of its outbox row (`NewOp` in state-types.ts), or null for a price with no row of its own
 *   (a batch query is recorded as a `query` whose credits are 1 per question).
 * - `single`: paid by a command on its own, outside a sync (`paidCall`).
 */
export const PAID_CALLS = {
  upload: { row: 'file', single: false, cost: (o: { bytes: number }) => uploadCost(o.bytes) },
  reprocess: { row: 'remote-file', single: false, cost: () => 5 },
  reindex: { row: 'call', single: false, cost: () => 2 },
  query: { row: 'call', single: true, cost: () => 1 },
  query_batch: { row: null, single: false, cost: (o: { queries: number }) => o.queries },
  chat: { row: 'call', single: true, cost: () => 1 },
  agent_create: { row: 'call', single: true, cost: () => 5 },
  agent_config: { row: 'call', single: true, cost: () => 2 },
  intelligence: { row: 'entries', single: false, cost: (o: { duplicate: boolean }) => (o.duplicate ? 0 : 1) },
  intelligence_batch: { row: 'entries', single: false, cost: (o: { newEntries: number }) => o.newEntries },
} as const satisfies Record<string, { row: OutboxRowShape | null; single: boolean; cost: (o: never) => number }>;

/** The shapes of an outbox row (state-types.ts gives each its fields). */
export type OutboxRowShape = 'file' | 'remote-file' | 'call' | 'entries';

type PaidCalls = typeof PAID_CALLS;
export type PaidKind = keyof PaidCalls;
type InputOf<K extends PaidKind> = Parameters<PaidCalls[K]['cost']> extends [infer I] ? I : unknown;

/** Paid operations and their inputs. Everything not listed here is free. */
export type Operation = { [K in PaidKind]: { kind: K } & InputOf<K> }[PaidKind];

/** The kinds the outbox carries: every paid call with a row of its own. */
export type OutboxKind = { [K in PaidKind]: PaidCalls[K]['row'] extends null ? never : K }[PaidKind];

/** The shape of kind K's outbox row. */
export type OutboxRowOf<K extends OutboxKind> = NonNullable<PaidCalls[K]['row']>;

/** The kinds a command pays for on its own, outside a sync. */
export type SinglePaidKind = { [K in PaidKind]: PaidCalls[K]['single'] extends true ? K : never }[PaidKind];

/** The outbox kinds, in PAID_CALLS's order. */
export const OUTBOX_KINDS: readonly OutboxKind[] = (Object.keys(PAID_CALLS) as PaidKind[]).filter(
  (k): k is OutboxKind => PAID_CALLS[k].row !== null,
);

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
  // Each rule reads only its own kind's input, which `op` is.
  const cost = PAID_CALLS[op.kind].cost as (o: Operation) => number;
  return cost(op);
}
