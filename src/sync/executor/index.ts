/** Runs plans: reconcile, observe, plan, record free decisions, make paid calls through the outbox, poll, reindex. */
export { preparePlan, capsOf, type SyncDeps } from './prepare.js';
export { runSync, type SyncRun } from './run-sync.js';
export { paidCall } from './paid-call.js';
export { runPaidTasks, type PaidTask } from './paid-ops.js';
export { paidQueue } from './paid-queue.js';
