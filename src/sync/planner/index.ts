/** The pure planner: observed files + tracked state + limits + budget → a plan with reasons and credits. */
export { planSync } from './plan-sync.js';
export { trackedKey } from '../tracked/keys.js';
export { summarize, bucketOf } from './totals.js';
export { admissionOrder } from './budget.js';
export { deltaOf } from './delta.js';
