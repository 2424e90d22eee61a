import { isAdvancedPlan, type Plan } from '../../shared/plans.js';
import { ServiceError } from '../service-error.js';

/** Throws 403 `tier_required` unless the plan is on the Advanced tier. */
export function requireAdvancedTier(plan: Plan, operation: string): void {
  if (!isAdvancedPlan(plan)) {
    throw new ServiceError(
      'tier_required',
      `${operation} needs an Advanced-tier plan (pro, team or enterprise); this dataset is on ${plan}`,
    );
  }
}
