import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps.js';
import { whileHeartbeating } from './heartbeating.js';
import { laneGroup } from './verify-batch/lane-pool.js';

/**
 * How long a loan waits for a batch with rows to start in its process: the batches launched in the
 * same workflow task as the loan may start a few tens of ms after it. Where none does (another
 * worker runs them), the loan's share idles this long, once.
 */
const LOAN_WAIT_MS = 1_000;

/** What the workflow lends: `lanes` `/verify` lanes (a share of the run's ceiling) to a round's batches. */
export interface LendLanesRequest {
  round: number;
  lanes: number;
}

/**
 * Verify phase, at a round's end: the share of a batch that ended, which the workflow has no batch
 * left to give, is lent to the batches still running in this worker process (their lane pool,
 * activities/verify-batch/lane-pool.ts), so the round's last rows are not sent on the last batch's
 * own share alone while the others' idle. Ends once those batches have no row left to hand out (a
 * second later where this process runs none), or when cancelled. Sends nothing of its own and
 * writes nothing.
 */
export function lendLanes(deps: ActivityDeps) {
  return (req: LendLanesRequest): Promise<void> =>
    whileHeartbeating(() => {
      const ctx = Context.current();
      return deps.lanes.lend(laneGroup(ctx.info, req.round), req.lanes, ctx.cancellationSignal, LOAN_WAIT_MS);
    });
}
