import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { FailureType } from '../src/contract/failure-types.js';
import type { ActivityDeps } from './deps.js';
import { whileHeartbeating } from './heartbeating.js';
import { laneGroup } from './verify-batch/lane-pool.js';

/**
 * How long a loan's first attempt waits for a batch with rows to start in its process: the batches
 * launched in the same workflow task as the loan may start a few tens of ms after it. Later
 * attempts do not wait: a loan that finds nothing to lend to moves on (below).
 */
const LOAN_WAIT_MS = 250;

/**
 * How often a loan heartbeats: the workflow cancels a loan when a re-judgment segment falls due and
 * counts its lanes as in use until the loan has ended (their rows answered), so it hears soon.
 */
const LOAN_HEARTBEAT_MS = 1000;

/** The delay before a loan's next attempt: 100 ms, doubling with each attempt, at most a second. */
export function moveDelayMs(attempt: number): number {
  return Math.min(1_000, 100 * 2 ** Math.max(0, attempt - 1));
}

/** What the workflow lends: `lanes` `/verify` lanes (a share of the run's ceiling) to the run's batches; `round`, its latest (for the history). */
export interface LendLanesRequest {
  round: number;
  lanes: number;
}

/**
 * Verify phase, with nothing to launch: the share of a batch that ended, which the workflow has no
 * batch to give, is lent to the batches still running in this worker process (their lane pool,
 * activities/verify-batch/lane-pool.ts), so the last rows are not sent on the last batch's own
 * share alone while the others' idle. Sends nothing of its own and writes nothing.
 *
 * Once this process's batches of the run have no row left to hand out (or it runs none), the loan
 * retires its lanes and fails with a benign `LoanMoves`: Temporal retries it shortly on whichever
 * worker polls next, so the share reaches the process whose batches still have rows. Each worker
 * process pools only its own batches; a loan that ended there instead (as before) left its share
 * idle for the rest of the round whenever it landed on a process without rows, and with several
 * worker processes most loans did (bench/README.md, "Worker processes"). The retries write no
 * history; the loan ends when the workflow cancels it (the batches have ended, or a re-judgment
 * segment falls due and needs the share), once its lanes have retired.
 */
export function lendLanes(deps: ActivityDeps) {
  return (req: LendLanesRequest): Promise<void> =>
    whileHeartbeating(
      async () => {
        const ctx = Context.current();
        const stop = ctx.cancellationSignal;
        await deps.lanes.lend(laneGroup(ctx.info), req.lanes, stop, ctx.info.attempt === 1 ? LOAN_WAIT_MS : 0);
        // Cancelled, or the worker shuts down: the loan ends, its lanes retired (`lend` waits for them).
        if (stop.aborted) return;
        throw ApplicationFailure.create({
          type: FailureType.LoanMoves,
          message: `no row of this run left to lend ${req.lanes} lane(s) to in this worker process; the loan moves to the next worker`,
          nextRetryDelay: moveDelayMs(ctx.info.attempt),
          category: ApplicationFailureCategory.BENIGN,
        });
      },
      undefined,
      LOAN_HEARTBEAT_MS,
    );
}
