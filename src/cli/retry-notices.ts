import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { aggregateWaitLine, isAggregateWait } from '../contract/aggregate-wait.js';
import { FailureType } from '../contract/failure-types.js';

/** What a retried activity looks like in `describe()` (the fields of PendingActivityInfo we read). */
export interface PendingActivity {
  activityId?: string | null;
  activityType?: { name?: string | null } | null;
  attempt?: number | null;
  lastFailure?: { message?: string | null; applicationFailureInfo?: { type?: string | null } | null } | null;
  /** The last heartbeat's details (a batch's checkpoint). */
  heartbeatDetails?: { payloads?: Payload[] | null } | null;
}

/**
 * Why the last attempt failed, when that is worth telling: not for a first attempt, nor when the
 * worker running it shut down (Ctrl-C): the next attempt simply goes on from its checkpoint; nor
 * for a loan of lanes moving on to another worker (activities/lend-lanes.ts); nor for the upload
 * activities (`upload*`), whose few tries end in one warning line of the summary.
 */
export function retryReason(a: PendingActivity): string | null {
  const message = a.lastFailure?.message;
  if (!message || (a.attempt ?? 0) < 2) return null;
  if (a.activityType?.name?.startsWith('upload')) return null;
  const type = a.lastFailure?.applicationFailureInfo?.type;
  if (type === FailureType.WorkerShutdown || type === FailureType.LoanMoves) return null;
  return message;
}

/** The details of an activity's last heartbeat (a batch's checkpoint, what the aggregate phase waits for), or undefined. */
export function lastHeartbeat(a: PendingActivity): unknown {
  const payload = a.heartbeatDetails?.payloads?.[0];
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload<unknown>(payload);
  } catch {
    return undefined;
  }
}

/** The line for an activity that has waited a while for a reply (a hung `/aggregate_metrics`), or null. */
export function waitNotice(a: PendingActivity, now: number): string | null {
  const details = lastHeartbeat(a);
  return isAggregateWait(details) ? aggregateWaitLine(details, now) : null;
}

/** The same failure text is not repeated within this long (a long outage fails every batch alike). */
export const REPEAT_AFTER_MS = 60_000;

/** One line for a retried activity: which, which attempt, and why the last one failed. */
export function retryNotice(a: PendingActivity): string | null {
  const message = retryReason(a);
  if (message === null) return null;
  return `Waiting: ${a.activityType?.name ?? 'activity'} attempt ${(a.attempt ?? 0) - 1} failed, Temporal retries it: ${message}`;
}

/**
 * Turns the run's retried activities into lines for the user, once per failed attempt, without
 * repeating the same text within `REPEAT_AFTER_MS`: during a verifier outage the user sees why
 * the run waits, a line a minute at most. An attempt waiting long for a reply gets one line too.
 */
export class RetryNotices {
  private readonly seenAttempts = new Set<string>();
  private readonly lastShown = new Map<string, number>();

  /** New lines for `pending` at time `now` (ms). */
  take(pending: readonly PendingActivity[], now: number): string[] {
    const lines: string[] = [];
    for (const a of pending) {
      const wait = waitNotice(a, now);
      const waitKey = `wait ${a.activityId}#${a.attempt}`;
      if (wait !== null && !this.seenAttempts.has(waitKey)) {
        this.seenAttempts.add(waitKey);
        lines.push(wait);
      }
      const line = retryNotice(a);
      if (line === null) continue;
      const attemptKey = `${a.activityId}#${a.attempt}`;
      if (this.seenAttempts.has(attemptKey)) continue;
      this.seenAttempts.add(attemptKey);
      const message = a.lastFailure!.message!;
      const last = this.lastShown.get(message);
      if (last !== undefined && now - last < REPEAT_AFTER_MS) continue;
      this.lastShown.set(message, now);
      lines.push(line);
    }
    return lines;
  }
}

/** The run's pending activities, or none when the server does not answer within `timeoutMs` (asked again later). */
export async function pendingActivities(handle: WorkflowHandle, timeoutMs = 3000): Promise<PendingActivity[]> {
  try {
    const desc = await handle.client.withDeadline(Date.now() + timeoutMs, () => handle.describe());
    return desc.raw.pendingActivities ?? [];
  } catch {
    return [];
  }
}
