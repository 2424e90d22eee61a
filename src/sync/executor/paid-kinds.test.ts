import { describe, expect, it } from 'vitest';
import { costOf, PAID_CALLS, type Operation, type OutboxKind, type PaidKind, type SinglePaidKind } from '../../shared/plans.js';
import { assertOpKind, OP_KINDS, type NewOp, type OpKind, type OutboxOp } from '../state/state-types.js';
import type { SinglePaidCall } from './paid-call.js';

// Compile-time checks (`npm run typecheck` reads this file): each place that names paid kinds names the same
// ones, so a kind written into one of them by hand, and not into PAID_CALLS (shared/plans.ts), fails here.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type _PricedAreThePaidCalls = Assert<Equal<Operation['kind'], PaidKind>>;
type _OutboxKindsAreDerived = Assert<Equal<OpKind, OutboxKind>>;
type _OpKindsListIsTheType = Assert<Equal<(typeof OP_KINDS)[number], OpKind>>;
type _EveryOutboxKindHasARow = Assert<Equal<NewOp['kind'], OpKind>>;
type _RowsReadBackTheSameKinds = Assert<Equal<OutboxOp['kind'], OpKind>>;
type _SingleCallsAreDerived = Assert<Equal<SinglePaidCall<unknown>['kind'], SinglePaidKind>>;
type _SingleCallsHaveAnOutboxRow = Assert<Equal<Extract<SinglePaidKind, OpKind>, SinglePaidKind>>;
type _EveryOutboxKindIsPriced = Assert<Equal<Extract<OpKind, Operation['kind']>, OpKind>>;

describe('paid kinds', () => {
  it('lists every paid call with a row in the outbox, in the order of PAID_CALLS', () => {
    const withRow = Object.entries(PAID_CALLS)
      .filter(([, c]) => c.row !== null)
      .map(([k]) => k);
    expect(OP_KINDS).toEqual(withRow);
    for (const kind of OP_KINDS) expect(() => assertOpKind(kind)).not.toThrow();
    expect(() => assertOpKind('query_batch')).toThrow(/unknown operation kind "query_batch"/);
  });

  it("prices each call as docs/api.md does, through the list's rules", () => {
    const prices: Record<PaidKind, number> = {
      upload: costOf({ kind: 'upload', bytes: 6 * 1_048_576 }),
      reprocess: costOf({ kind: 'reprocess' }),
      reindex: costOf({ kind: 'reindex' }),
      query: costOf({ kind: 'query' }),
      query_batch: costOf({ kind: 'query_batch', queries: 3 }),
      chat: costOf({ kind: 'chat' }),
      agent_create: costOf({ kind: 'agent_create' }),
      agent_config: costOf({ kind: 'agent_config' }),
      intelligence: costOf({ kind: 'intelligence', duplicate: false }),
      intelligence_batch: costOf({ kind: 'intelligence_batch', newEntries: 4 }),
    };
    expect(prices).toEqual({
      upload: 6,
      reprocess: 5,
      reindex: 2,
      query: 1,
      query_batch: 3,
      chat: 1,
      agent_create: 5,
      agent_config: 2,
      intelligence: 1,
      intelligence_batch: 4,
    });
    expect(costOf({ kind: 'intelligence', duplicate: true })).toBe(0);
  });
});
