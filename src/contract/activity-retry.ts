/**
 * Retry intervals of the workflow's activity groups (workflows/activity-proxies.ts), declared once:
 * the worker's log line of a retried batch tells when its next try comes from them. Pure constants:
 * the workflow bundle imports this file.
 */
export const QUICK_RETRY = { initialIntervalMs: 1_000, maximumIntervalMs: 30_000 } as const;
/** `verifyBatch` and the other long activities. */
export const LONG_RETRY = { initialIntervalMs: 2_000, maximumIntervalMs: 60_000 } as const;

/** The wait before the try after attempt `attempt` failed (Temporal's default backoff coefficient of 2). */
export function nextTryMs(policy: { initialIntervalMs: number; maximumIntervalMs: number }, attempt: number): number {
  return Math.min(policy.maximumIntervalMs, policy.initialIntervalMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
}
