import type { BatchCounts } from '../contract/run-spec.js';
import { lastHeartbeat, retryReason, type PendingActivity } from './retry-notices.js';

/** What the running batches add to the committed counts, from their heartbeats. */
export interface LiveBatches {
  /** Rows answered inside running batches (in their checkpoints, not yet committed). */
  finished: number;
  done: number;
  failed: number;
  /** Why a batch is being retried (a verifier outage), or null. */
  outage: string | null;
}

export const NO_LIVE_BATCHES: LiveBatches = { finished: 0, done: 0, failed: 0, outage: null };

/** The counts of a batch's last heartbeat (its checkpoint), or null. */
function heartbeatCounts(a: PendingActivity): BatchCounts | null {
  return (lastHeartbeat(a) as { counts?: BatchCounts } | null | undefined)?.counts ?? null;
}

/** Sums the checkpoints of the run's pending `verifyBatch` activities and finds an outage's reason. */
export function liveBatches(pending: readonly PendingActivity[]): LiveBatches {
  const live = { ...NO_LIVE_BATCHES };
  for (const a of pending) {
    if (a.activityType?.name !== 'verifyBatch') continue;
    const c = heartbeatCounts(a);
    if (c) {
      live.done += c.main;
      live.failed += c.failed;
      live.finished += c.main + c.failed + c.dropped;
    }
    live.outage ??= retryReason(a);
  }
  return live;
}
