import { formatCount } from '../planner/format.js';
import type { OutboxOp, TrackedEntry } from '../state/index.js';
import type { EntryItem, SyncPlan } from '../types.js';
import { fields } from './columns.js';
import { printable } from '../../shared/printable.js';

/**
 * The intelligence entries of the plan for a path as the user typed it: an entry (`file#key`,
 * `source/file#key`), an invalid record (`file:line`), or a whole entry file (`faq.yaml`,
 * `kb/faq.yaml`: each of its entries).
 */
export function findEntryItems(plan: Pick<SyncPlan, 'intelligence'>, query: string): EntryItem[] {
  const q = query.replace(/^\.\//, '').replace(/\/+$/, '');
  const items = plan.intelligence?.items ?? [];
  const exact = items.filter((i) => i.path === q || `${i.source}/${i.path}` === q);
  if (exact.length > 0) return exact;
  return items.filter((i) => [`${q}#`, `${q}:`].some((p) => i.path.startsWith(p) || `${i.source}/${i.path}`.startsWith(p)));
}

/** What `explain` knows of an entry beside its plan item: the state's entry of its content, and the writes queued for it. */
export type EntryFacts = { tracked: TrackedEntry | undefined; ops: readonly OutboxOp[] };

/**
 * `kbsync explain PATH` for an intelligence entry: what the next run does with it and why (the plan's
 * decision), the entry the dataset holds for its content as the state knows it (id, status, the
 * service's failure reason, where it was written from), and the last write queued for it (how it ended).
 */
export function explainEntry(item: EntryItem, facts: EntryFacts): string {
  const out: [string, string][] = [['decision', `${item.action}: ${item.reason}`]];
  out.push(['credits', item.action === 'write' ? `${formatCount(item.credits)} (intelligence entry)` : '0']);
  out.push(['agent', item.agentId]);
  if (item.title !== null) out.push(['title', item.title]);
  if (item.line > 0) out.push(['line', String(item.line)]);
  if (item.sha256 !== null) out.push(['sha256', item.sha256]);
  out.push(['state', stateFact(item, facts.tracked)]);
  const last = lastWrite(item, facts.ops);
  if (last !== null) out.push(['last write', last]);
  return [`${printable(`${item.source}/${item.path}`)} (intelligence entry)`, ...fields(out)].join('\n');
}

function stateFact(item: EntryItem, t: TrackedEntry | undefined): string {
  if (item.sha256 === null) return 'no entry: the record could not be read';
  if (t === undefined) return 'the dataset holds no entry with this content (as far as the state knows)';
  const id = t.remoteId === null || t.remoteId === '' ? 'an entry whose id is not known yet' : `entry ${t.remoteId}`;
  const failed = t.status === 'failed' && t.error !== null ? `, error: ${t.error}` : '';
  const from =
    t.source === null
      ? 'adopted from the service listing'
      : t.source === item.source && t.path === item.path
        ? 'written from this record'
        : `written from ${t.source}/${t.path}`;
  return `${id} (${t.status}${failed}), ${from}; updated ${t.updatedAt}`;
}

/** The newest write queued for this entry (its content in the op's payload), or null when none is kept. */
function lastWrite(item: EntryItem, ops: readonly OutboxOp[]): string | null {
  const mine = ops.filter((op) => op.payload?.entries.some((e) => e.sha256 === item.sha256 && e.path === item.path) === true);
  const op = mine.at(-1);
  if (op === undefined) return null;
  const batch = op.kind === 'intelligence_batch' ? ` (a batch of ${op.payload?.entries.length ?? 0})` : '';
  const error = op.error === null ? '' : `: ${op.errorCode === null ? '' : `${op.errorCode}, `}${op.error}`;
  return `op ${op.id}${batch}, ${op.state}${error}; queued ${op.createdAt}, last changed ${op.updatedAt}`;
}
