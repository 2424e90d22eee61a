/** Runs plans: reconcile, observe, plan, record free decisions, make paid calls through the outbox, poll, reindex. */
export { preparePlan, capsOf, type SyncDeps, type PreparedPlan } from './prepare.js';
export { runSync, type SyncOptions, type SyncRun } from './run-sync.js';
export { reconcileUnknown, type ReconcileReport } from './reconcile.js';
export { remoteNameMapper } from './remote-names.js';
export { paidCall, type SinglePaidCall } from './paid-call.js';
export { runPaidTasks, type PaidTask, type PaidResult, type StopReason } from './paid-ops.js';
export { paidQueue, type PaidQueue, type QueueTimers } from './paid-queue.js';
export { waitForProcessing } from './poll.js';
