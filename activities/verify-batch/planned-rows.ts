/** Naming a batch's row in messages; reading its rows (src/planning/planned-rows.ts). */
import type { Stamps } from '../../src/contract/outcome.js';
import type { PlanRecord } from '../../src/planning/plan-file.js';
import type { VerifyBatchRequest } from './request.js';

// The reading itself is the planning layer's (`reverify status` reads plan rows too).
export { PlannedFiles, readPlannedRows, type PlannedRows } from '../../src/planning/planned-rows.js';

/** A row for messages: `file:line (key (t, r))`, the key as its exact digits. */
export function rowPlace(req: Pick<VerifyBatchRequest, 'plan'>, rec: PlanRecord, stamps: Stamps): string {
  return `${req.plan.sourcePath}:${rec.sourceLine} (key (${stamps.task}, ${stamps.rollout}))`;
}

/** The sidecar this batch's failures are committed to, for messages. */
export function sidecarPathOf(req: Pick<VerifyBatchRequest, 'outputSidecar'>): string {
  return req.outputSidecar ?? 'the sidecar';
}
