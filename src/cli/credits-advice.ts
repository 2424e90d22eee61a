import type { SyncRun } from '../sync/executor/index.js';
import { plural } from '../sync/planner/format.js';
import { creditsAddCommand, type OpenTarget } from './target.js';

/**
 * What to do after a run the service stopped for credits (402): how many credits the work left needs,
 * the balance, and, for the embedded target, the exact command that adds what is missing. The work left
 * is deferred (nothing was charged for it) and the next sync sends it.
 */
export async function creditsAdvice(run: SyncRun, target: OpenTarget): Promise<string[]> {
  const left = run.items.filter((i) => i.outcome === 'not-run' && (i.action === 'upload' || i.action === 'reprocess'));
  const needed = left.reduce((sum, i) => sum + i.credits, 0);
  let balance: number | null = null;
  try {
    balance = (await target.client.getDataset()).creditsRemaining;
  } catch {
    // A free call after a refusal; without the balance, the advice names the whole need.
  }
  const has = balance === null ? '' : `the dataset has ${plural(balance, 'credit')}; `;
  const what = `${has}the ${plural(left.length, 'file')} left (deferred, not failed) ${left.length === 1 ? 'needs' : 'need'} ${plural(needed, 'credit')}`;
  if (target.embedded === null) return [`${what}. Add credits on the service, then run kbsync sync again.`];
  const missing = Math.max(1, needed - (balance ?? 0));
  return [`${what}. Add them to the embedded dataset, then run kbsync sync again:`, `  ${creditsAddCommand(target.embedded, missing)}`];
}
