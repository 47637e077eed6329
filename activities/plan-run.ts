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
 * Plan phase (spec §4.5–§4.8), in memory flat in the number of rows: everything keyed — the
 * materialized inputs (byte places; the last duplicate wins), the output's and sidecar's keys
 * (resume), --rollouts' keys (recovery) and the source rows (the rollouts, or in recovery mode the
 * judge failures of their sidecar) — is sorted by key on disk (`ExternalSorter`), each key's group
 * decides its source rows' verdicts (`decideKey`), and a last pass over the verdicts in file order
 * applies `limit`, stops at the first bad row, and writes the plan file. Every line is validated
 * here, so bad input stops the run with `file:line: reason` before anything is written or sent.
 * Returns counts only.
 */
export function planRun(req: PlanRequest): Promise<PlanOutcome> {
  return failFastOnUserError(() => whileHeartbeating(async () => (await takePlanAhead(req)) ?? (await planInto(req))));
}
