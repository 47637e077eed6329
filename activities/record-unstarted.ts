import { unstartedPath } from '../src/contract/file-names.js';
import type { PlanSummary } from '../src/contract/run-spec.js';
import { withRunLock } from '../src/io/run-lock.js';
import { recordUnstarted } from '../src/planning/unstarted-rows.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface UnstartedRowsRequest {
  outputs: { output: string; sidecar: string };
  /** The first round's plan; null (a later round, or no plan): nothing is unstarted. */
  plan: Pick<PlanSummary, 'planPath' | 'sourcePath' | 'rows' | 'recordBytes'> | null;
  reason: string;
}

/**
 * A run that ends early (cancelled, failed) records the rollouts of its plan that have no row in
 * the outputs as `<stem>_unstarted.jsonl` (src/planning/unstarted-rows.ts: the seed's
 * `record_unstarted`), under the run lock; returns how many, and the file. Rows go from file to file, never
 * through the workflow. Writing the whole file again (a retry) gives the same file.
 */
export function recordUnstartedRows(req: UnstartedRowsRequest): Promise<{ rows: number; path: string }> {
  return failFastOnUserError(() =>
    whileHeartbeating(() =>
      withRunLock(req.outputs.output, async () => {
        const path = unstartedPath(req.outputs.output);
        return { rows: await recordUnstarted({ ...req.outputs, plan: req.plan, path, reason: req.reason }), path };
      }),
    ),
  );
}
