/**
 * The plan phase's activity: the plan made ahead (plan-ahead.ts) when it is this request's, else
 * the plan made now (plan-run/plan-into.ts).
 */
import { whileHeartbeating } from './heartbeating.js';
import { takePlanAhead } from './plan-ahead.js';
import { planInto, type PlanOutcome, type PlanRequest } from './plan-run/plan-into.js';
import { failFastOnUserError } from './user-errors.js';

export type { PlanOutcome, PlanRequest } from './plan-run/plan-into.js';

/**
 * The plan phase (spec §4.5–§4.8, `planInto`), heartbeating; bad input fails the activity as a
 * user error (`file:line: reason`, nothing written or sent). Returns counts only.
 */
export function planRun(req: PlanRequest): Promise<PlanOutcome> {
  return failFastOnUserError(() => whileHeartbeating(async () => (await takePlanAhead(req)) ?? (await planInto(req))));
}
