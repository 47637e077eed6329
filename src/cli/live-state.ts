/**
 * A live run's state as the CLI reads it: the checkpoints of its running batches (`describe`),
 * THEN the workflow's progress answer, made into one view by run-view.ts (in that order, so that a
 * batch ending in between is counted by its result, not twice). The terminal that started the run,
 * `reverify status` and `reverify list` all read it here.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Progress } from '../contract/run-spec.js';
import { runView, type BatchBeat, type RunView } from '../contract/run-view.js';
import { queryProgress } from './query-progress.js';
import { lastHeartbeat, pendingActivities, retryReason, type PendingActivity } from './retry-notices.js';

export interface LiveState {
  /** The progress answer and its view; null when no worker answered the query (asked again later). */
  progress: Progress | null;
  view: RunView | null;
  /** The run's pending activities, as `describe` listed them just before the progress answer. */
  pending: PendingActivity[];
  /** Why a batch is being retried (a verifier outage), or null. */
  outage: string | null;
}

/** What a batch's last heartbeat (its checkpoint) says, or null (no heartbeat yet, or of an earlier version). */
function beatOf(a: PendingActivity): BatchBeat | null {
  const cp = lastHeartbeat(a) as
    | { counts?: { main: number; failed: number; dropped: number }; round?: number; batch?: number; requestsUsed?: number }
    | null
    | undefined;
  if (!cp?.counts || typeof cp.round !== 'number' || typeof cp.batch !== 'number') return null;
  const { main, failed, dropped } = cp.counts;
  return { round: cp.round, batch: cp.batch, main, failed, dropped, requests: cp.requestsUsed ?? 0 };
}

/** The checkpoints of the run's pending `verifyBatch` activities. */
export function batchBeats(pending: readonly PendingActivity[]): BatchBeat[] {
  return pending.filter((a) => a.activityType?.name === 'verifyBatch').flatMap((a) => beatOf(a) ?? []);
}

/** Why a batch is being retried (a verifier outage), or null. */
export function outageOf(pending: readonly PendingActivity[]): string | null {
  for (const a of pending) if (a.activityType?.name === 'verifyBatch' && retryReason(a) !== null) return retryReason(a);
  return null;
}

/** The run's live state: its pending activities, then its progress and view. */
export async function readLive(handle: WorkflowHandle, timeoutMs = 3000): Promise<LiveState> {
  const pending = await pendingActivities(handle, timeoutMs);
  const progress = await queryProgress(handle, timeoutMs);
  return { progress, view: progress && runView(progress, batchBeats(pending)), pending, outage: outageOf(pending) };
}
