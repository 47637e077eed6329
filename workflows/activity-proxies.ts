/**
 * The workflow's activity proxies, grouped by how long their activities may run and how they are
 * retried, and the failure types that decide it (src/contract/failure-types.ts).
 */
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { ReverifyActivities } from '../activities/index.js';
import { FailureType, TERMINAL_FAILURE_TYPES } from '../src/contract/failure-types.js';

/** Failure types that retrying cannot fix. */
export const TERMINAL_TYPES = TERMINAL_FAILURE_TYPES;

/**
 * Attempts of the aggregate phase before the run gives up on the metrics (transport errors,
 * timeouts, 408/429/5xx); the rows are committed by then, so an outage of `/aggregate_metrics`
 * ends the run (exit 3) instead of holding it. With the intervals below: about 10 minutes of waiting.
 */
export const AGGREGATION_MAX_ATTEMPTS = 10;
const AGGREGATION_RETRY = { initialIntervalMs: 5_000, maximumIntervalMs: 120_000 };

/**
 * Every activity's cancellation (`reverify cancel`) is waited for: the workflow learns when each
 * has really stopped, so nothing writes to the outputs or the work directory after the cleanup.
 */
const WAIT_CANCELLED = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED;

/**
 * Short activities. They heartbeat on a timer too: without a heartbeat timeout, a worker killed
 * in the middle of one (a commit, say) would be noticed only when startToClose runs out.
 */
export const quick = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: TERMINAL_TYPES },
  cancellationType: WAIT_CANCELLED,
});

/** Activities that may run long on big files; they heartbeat, so a dead worker shows within 2 minutes. */
export const long = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '12 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '2s', maximumInterval: '1 minute', nonRetryableErrorTypes: TERMINAL_TYPES },
  cancellationType: WAIT_CANCELLED,
});

/** The aggregate phase's retry policy: bounded; replies that retrying cannot fix are not retried. */
export function aggregationRetry(r: { initialIntervalMs: number; maximumIntervalMs: number }) {
  return {
    initialInterval: r.initialIntervalMs,
    backoffCoefficient: 2,
    maximumInterval: r.maximumIntervalMs,
    maximumAttempts: AGGREGATION_MAX_ATTEMPTS,
    nonRetryableErrorTypes: [...TERMINAL_TYPES, FailureType.AggregationFailed],
  };
}

/** The aggregate phase: like `long`, but it gives up after `AGGREGATION_MAX_ATTEMPTS` (see finish.ts). */
export const aggregation = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '12 hours',
  heartbeatTimeout: '2 minutes',
  retry: aggregationRetry(AGGREGATION_RETRY),
  cancellationType: WAIT_CANCELLED,
});

/** Cleanup after a cancellation: a few tries, so a broken disk cannot hold the cancelled run. */
export const cleanup = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5, nonRetryableErrorTypes: TERMINAL_TYPES },
});
