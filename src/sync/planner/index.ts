/** The pure planner: observed files + tracked state + limits + budget → a plan with reasons and credits. */
export { planSync } from './plan-sync.js';
export { trackedKey, remoteNameFor, compareByPath } from './keys.js';
export { summarize, bucketOf, ACTION_BUCKET, emptyCounts, type TotalsBucket } from './totals.js';
export { admissionOrder, blockingPeriod, type BudgetBlock } from './budget.js';
export { SKIP_ACTION } from './skipped.js';
export { BUDGET_SETTING } from './reasons.js';
export { formatBytes, formatCount, shortSha, plural } from './format.js';
