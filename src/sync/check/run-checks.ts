import type { KnowledgeClient, QueryResult } from '../../client/index.js';
import { KbsyncError, errorText } from '../../shared/errors.js';
import { costOf } from '../../shared/plans.js';
import { paidCall } from '../executor/paid-call.js';
import { overBudgetReason } from '../planner/reasons.js';
import type { BudgetCaps, BudgetPeriod, StateStore } from '../state/index.js';
import type { KnowledgeCheck } from './questions.js';

/** The service's limit on the questions of one batch query (docs/api.md, chosen). */
export const MAX_BATCH_QUESTIONS = 20;

/** One paid call of a check run: a single query, or a batch of questions sharing one top k. */
export type CheckCall = { kind: 'query' | 'batch'; topK: number; checks: number[]; credits: number };

/** How the checks will be asked, and what that costs: planned before anything is sent. */
export type CheckCallPlan = { calls: CheckCall[]; credits: number; batched: boolean };

/**
 * Groups the checks into calls: on an Advanced-tier plan, batch queries of up to 20 questions that
 * share a top k (1 credit per question); otherwise one query per check (1 credit each).
 */
export function planCheckCalls(checks: readonly KnowledgeCheck[], defaultTopK: number, advanced: boolean): CheckCallPlan {
  const topKOf = (c: KnowledgeCheck): number => c.topK ?? defaultTopK;
  if (!advanced) {
    const calls = checks.map((c, i): CheckCall => ({ kind: 'query', topK: topKOf(c), checks: [i], credits: costOf({ kind: 'query' }) }));
    return { calls, credits: calls.reduce((n, c) => n + c.credits, 0), batched: false };
  }
  const byTopK = new Map<number, number[]>();
  checks.forEach((c, i) => {
    const list = byTopK.get(topKOf(c));
    if (list === undefined) byTopK.set(topKOf(c), [i]);
    else list.push(i);
  });
  const calls: CheckCall[] = [];
  for (const [topK, indexes] of byTopK) {
    for (let at = 0; at < indexes.length; at += MAX_BATCH_QUESTIONS) {
      const part = indexes.slice(at, at + MAX_BATCH_QUESTIONS);
      calls.push({ kind: 'batch', topK, checks: part, credits: costOf({ kind: 'query_batch', queries: part.length }) });
    }
  }
  return { calls, credits: calls.reduce((n, c) => n + c.credits, 0), batched: true };
}

/** What the calls answered: each check's results (best first), and the credits booked. */
export type CheckAnswers = { results: QueryResult[][]; creditsSpent: number; runId: number };

/**
 * Makes the planned calls, as a sync makes its own: first the whole cost is checked against the run,
 * day and month caps (a check half run proves nothing, so none is sent when all do not fit: exit 3);
 * then each call gets its outbox row and reservation before it is sent (paidCall), in one run.
 */
export async function askChecks(
  deps: { state: StateStore; caps: BudgetCaps; client: KnowledgeClient },
  checks: readonly KnowledgeCheck[],
  plan: CheckCallPlan,
): Promise<CheckAnswers> {
  const { state, caps, client } = deps;
  const runId = state.startRun('check');
  try {
    const window = state.budgetWindow(caps, runId);
    for (const period of ['run', 'day', 'month'] as const satisfies readonly BudgetPeriod[]) {
      if (window.used[period] + plan.credits > caps[period]) {
        const why = overBudgetReason(period, window.used[period], plan.credits, caps[period], 0);
        throw new KbsyncError('budget_exhausted', `check not started: its ${plan.credits} questions ${why}; nothing was sent`);
      }
    }
    const results: QueryResult[][] = checks.map(() => []);
    let creditsSpent = 0;
    for (const call of plan.calls) {
      const questions = call.checks.map((i) => (checks[i] as KnowledgeCheck).question);
      if (call.kind === 'query') {
        const answer = await paidCall(
          state,
          caps,
          {
            kind: 'query',
            reason: `check "${questions[0] ?? ''}"`,
            perform: async (idempotencyKey) => ({
              value: await client.query({ query: questions[0] ?? '', topK: call.topK }, { idempotencyKey }),
              creditsCharged: null,
            }),
          },
          { runId },
        );
        results[call.checks[0] as number] = answer;
      } else {
        const answers = await paidCall(
          state,
          caps,
          {
            kind: 'query',
            credits: call.credits,
            reason: `check: batch of ${questions.length} questions, from "${questions[0] ?? ''}"`,
            perform: async (idempotencyKey) => ({
              value: await client.queryBatch({ queries: questions, topK: call.topK }, { idempotencyKey }),
              creditsCharged: null,
            }),
          },
          { runId },
        );
        call.checks.forEach((checkIndex, k) => {
          results[checkIndex] = answers[k]?.results ?? [];
        });
      }
      creditsSpent += call.credits;
    }
    state.finishRun(runId, 'done', { kind: 'check', checks: checks.length, calls: plan.calls.length, credits: creditsSpent });
    return { results, creditsSpent, runId };
  } catch (err) {
    state.finishRun(runId, 'failed', { kind: 'check', error: errorText(err) });
    throw err;
  }
}
