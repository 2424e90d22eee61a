import { lossyName } from '../../shared/byte-names.js';
import { SPEC_UPLOAD_COST } from '../../shared/plans.js';
import { formatBytes, formatCount } from '../planner/format.js';
import { BUDGET_SETTING } from '../planner/reasons.js';
import type { PlanItem, RunItem, SyncPlan, TrackedFile } from '../types.js';
import { fields } from './columns.js';
import { printable } from '../../shared/printable.js';

/** The plan's items for a path as the user typed it: `path`, `source/path` or the remote name. */
export function findItems(plan: Pick<SyncPlan, 'items'>, query: string): PlanItem[] {
  const q = normalized(query);
  // A name that is not UTF-8 is found as the plan prints it (`\xHH`) and as the shell passes its bytes (U+FFFD each).
  const named = (path: string): boolean => path === q || lossyName(path) === q;
  return plan.items.filter(
    (i) =>
      i.path === q ||
      `${i.source}/${i.path}` === q ||
      i.remoteName === q ||
      (i.action === 'skip:bad-name' && (named(i.path) || named(`${i.source}/${i.path}`))),
  );
}

/**
 * The skipped folders a path is inside of (an excluded or ignored folder is one plan item; the files in
 * it are never listed): what `explain` shows for a file there.
 */
export function findEnclosingSkips(plan: Pick<SyncPlan, 'items'>, query: string): PlanItem[] {
  const q = normalized(query);
  return plan.items.filter(
    (i) => i.action.startsWith('skip:') && i.path !== '' && (q.startsWith(`${i.path}/`) || q.startsWith(`${i.source}/${i.path}/`)),
  );
}

function normalized(query: string): string {
  return query.replace(/^\.\//, '').replace(/\/+$/, '');
}

/**
 * `kbsync explain PATH`: why this file was (or will be) uploaded, skipped or deferred, with the
 * facts behind it: size and limit, sha256, the remote copy, what the state knew, and the budget.
 */
export function explainItem(item: PlanItem | RunItem, tracked?: TrackedFile, plan?: SyncPlan): string {
  const facts: [string, string][] = [['decision', `${item.action}: ${item.reason}`]];
  facts.push(['credits', creditsFact(item, plan)]);
  if ('outcome' in item)
    facts.push(['outcome', `${item.outcome}, ${formatCount(item.creditsCharged)} charged${item.error ? `; ${item.error}` : ''}`]);
  if (item.size !== null) facts.push(['size', sizeFact(item.size, item, plan)]);
  if (item.sha256 !== null) facts.push(['sha256', item.sha256]);
  facts.push(['remote', remoteFact(item)]);
  facts.push(...actionFacts(item, plan));
  facts.push(['state', tracked === undefined ? 'not tracked before this plan' : trackedFact(tracked)]);
  if (plan !== undefined) facts.push(['budget', budgetFact(plan)]);
  return [printable(`${item.source}/${item.path}`), ...fields(facts)].join('\n');
}

function creditsFact(item: PlanItem, plan: SyncPlan | undefined): string {
  if (item.action === 'upload') {
    const { base, perMiB, includedMiB } = plan?.uploadCost ?? SPEC_UPLOAD_COST;
    return `${formatCount(item.credits)} (upload: ${base}, plus ${perMiB} per started MB over ${includedMiB} MB)`;
  }
  if (item.action === 'reprocess') return `${formatCount(item.credits)} (reprocess)`;
  if (item.action === 'defer:over-budget' && item.cost !== undefined) return `0 now; it would cost ${formatCount(item.cost)}`;
  return '0';
}

function sizeFact(size: number, item: PlanItem, plan: SyncPlan | undefined): string {
  const exact = size >= 1024 ? ` (${formatCount(size)} bytes)` : '';
  if (plan === undefined) return `${formatBytes(size)}${exact}`;
  const { effectiveMaxFileBytes: limit, maxFileBytes, planMaxFileBytes } = plan.limits;
  const source = maxFileBytes !== null && maxFileBytes < planMaxFileBytes ? 'limits.maxFileBytes' : `the ${plan.limits.plan} plan`;
  const verdict = size > limit ? 'over' : 'within';
  return `${formatBytes(size)}${exact}; ${verdict} the limit of ${formatBytes(limit)} (${source})`;
}

function remoteFact(item: PlanItem): string {
  if (item.remoteId === null) {
    if (item.action === 'skip:bad-name') return 'none: a name that is not UTF-8 has no name on the service';
    const name = printable(item.remoteName);
    return item.action === 'upload' ? `will be stored as ${name}` : `none yet (it would be named ${name})`;
  }
  return `${printable(item.remoteName)}, id ${item.remoteId}`;
}

function actionFacts(item: PlanItem, plan: SyncPlan | undefined): [string, string][] {
  const out: [string, string][] = [];
  if (item.renamedFrom !== undefined) {
    const from = printable(`${item.renamedFrom.source}/${item.renamedFrom.path}`);
    out.push(['moved from', `${from}; the remote copy keeps the name ${printable(item.remoteName)}`]);
  }
  if (item.duplicateOf !== undefined) {
    const where = item.duplicateOf.inThisRun
      ? 'uploaded in this run'
      : `already in the dataset${item.duplicateOf.remoteId ? ` (id ${item.duplicateOf.remoteId})` : ''}`;
    out.push(['same content', `${printable(item.duplicateOf.name)}, ${where}`]);
  }
  if (item.reuses !== undefined) {
    out.push([
      'reuses',
      `${printable(item.reuses.name)}, id ${item.reuses.remoteId} (${item.reuses.status}): a copy of this content the dataset holds, which no tracked file pointed at; no upload`,
    ]);
  }
  if (item.previousSha256 !== undefined) out.push(['previous sha256', item.previousSha256]);
  if (item.staleRemoteId != null) {
    out.push([
      'stale copy',
      `${printable(item.previousRemoteName ?? item.remoteName)}, id ${item.staleRemoteId}: stays in the dataset (the API has no delete or replace)`,
    ]);
  }
  if (item.reprocessAttempt !== undefined) out.push(['reprocess', `attempt ${item.reprocessAttempt}`]);
  if (item.deferredBy !== undefined && plan !== undefined) {
    const p = item.deferredBy;
    out.push([
      'stopped by',
      `${BUDGET_SETTING[p]} = ${formatCount(plan.budget.caps[p])}; ${formatCount(plan.budget.used[p])} already used or reserved this ${p} before this plan`,
    ]);
  }
  return out;
}

function trackedFact(t: TrackedFile): string {
  const chunks = typeof t.remoteChunks === 'number' ? `, ${t.remoteChunks} chunk${t.remoteChunks === 1 ? '' : 's'}` : '';
  const remote = t.remoteId === null ? 'no remote copy' : `remote id ${t.remoteId} (${t.remoteStatus ?? 'status unknown'}${chunks})`;
  const failed =
    t.remoteStatus === 'failed'
      ? `, reprocessed ${t.reprocessAttempts} time${t.reprocessAttempts === 1 ? '' : 's'}${t.remoteError ? `, error: ${t.remoteError}` : ''}`
      : '';
  const last = t.lastAction === null ? '' : `; last decision ${t.lastAction}${t.lastReason ? ` (${t.lastReason})` : ''}`;
  return `${formatBytes(t.size)}, sha256 ${t.sha256.slice(0, 12)}…, ${remote}${failed}; updated ${t.updatedAt}${last}`;
}

function budgetFact(plan: SyncPlan): string {
  const { caps, used, planned } = plan.budget;
  return `this plan admits ${formatCount(planned)}; used before it: run ${formatCount(used.run)} of ${formatCount(caps.run)}, day ${formatCount(used.day)} of ${formatCount(caps.day)}, month ${formatCount(used.month)} of ${formatCount(caps.month)}`;
}
