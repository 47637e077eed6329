/**
 * The workflow's activity proxies, grouped by how long their activities may run and how they are
 * retried, and the failure types that decide it (src/contract/failure-types.ts).
 */
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { ReverifyActivities } from '../activities/index.js';
import { LONG_RETRY, QUICK_RETRY } from '../src/contract/activity-retry.js';
import { FailureType, TERMINAL_FAILURE_TYPES } from '../src/contract/failure-types.js';

/** Failure types that retrying cannot fix. */
export const TERMINAL_TYPES = TERMINAL_FAILURE_TYPES;

/**
 * Retry intervals of the aggregate phase. Its attempts are not bounded: an attempt fails, and is
 * retried, only while the resources server is down or busy (an outage, waited out as for `/verify`);
 * what retrying cannot fix fails it with `AggregationFailed`, which is not retried
 * (activities/aggregate-post.ts), and the run ends with its rows complete (see finish.ts).
 */
const AGGREGATION_RETRY = { initialIntervalMs: 5_000, maximumIntervalMs: 60_000 };
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
  retry: {
    initialInterval: QUICK_RETRY.initialIntervalMs,
    maximumInterval: QUICK_RETRY.maximumIntervalMs,
    nonRetryableErrorTypes: TERMINAL_TYPES,
  },
  cancellationType: WAIT_CANCELLED,
});

/** The timeouts and retries of activities that may run long. */
const LONG_RUNNING = {
  startToCloseTimeout: '12 hours',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: LONG_RETRY.initialIntervalMs,
    maximumInterval: LONG_RETRY.maximumIntervalMs,
    nonRetryableErrorTypes: TERMINAL_TYPES,
  },
} as const;

/** Activities that may run long on big files; they heartbeat, so a dead worker shows within 2 minutes. */
export const long = proxyActivities<ReverifyActivities>({ ...LONG_RUNNING, cancellationType: WAIT_CANCELLED });

/**
 * Loans of `/verify` lanes to the batches still running (activities/lend-lanes.ts). A loan's lanes
 * send those batches' rows, so a cancelled loan holds its share until it has ended, its lanes
 * retired: the window never counts its slots free while they may still send.
 */
export const loan = proxyActivities<ReverifyActivities>({
  ...LONG_RUNNING,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** The aggregate phase's retry policy: outages are retried without bound; `AggregationFailed` is not retried. */
export function aggregationRetry(r: { initialIntervalMs: number; maximumIntervalMs: number }) {
  return {
    initialInterval: r.initialIntervalMs,
    backoffCoefficient: 2,
    maximumInterval: r.maximumIntervalMs,
    nonRetryableErrorTypes: [...TERMINAL_TYPES, FailureType.AggregationFailed],
  };
}

/** The aggregate phase: like `long`, but a failure that retrying cannot fix ends it (see finish.ts). */
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

/**
 * The upload phase (activities/upload-results.ts): a few tries, 1 s then 2 s apart, then the run goes
 * on without it (workflows/upload.ts); a refusal of the tracker is not retried. Bounded in time too,
 * so a tracker that hangs cannot hold the run.
 */
export const UPLOAD_RETRY = { initialIntervalMs: 1_000, maximumIntervalMs: 10_000, maximumAttempts: 3 };
export const upload = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: UPLOAD_RETRY.initialIntervalMs,
    backoffCoefficient: 2,
    maximumInterval: UPLOAD_RETRY.maximumIntervalMs,
    maximumAttempts: UPLOAD_RETRY.maximumAttempts,
    nonRetryableErrorTypes: [...TERMINAL_TYPES, FailureType.UploadRefused],
  },
  cancellationType: WAIT_CANCELLED,
});

/**
 * The W&B upload (activities/upload-results.ts `uploadWandbRun`): one try, so one W&B run per run; a
 * retry after a partial log would open a second one. A worker lost during it is noticed by the
 * heartbeat; the run then ends with the warning (`reverify upload --to wandb` logs it later).
 */
export const wandbOnce = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
  cancellationType: WAIT_CANCELLED,
});
