/** How the workflow reports failures: the run's own terminal failure, and an error chain's one line. */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { TERMINAL_TYPES } from './activity-proxies.js';

/** Rethrows an activity's terminal failure as the workflow's own, keeping its one-line message. */
export function asRunFailure(err: unknown): unknown {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type && TERMINAL_TYPES.includes(cause.type)) {
    return ApplicationFailure.nonRetryable(cause.message, cause.type);
  }
  return err;
}

/** The innermost message of a failure chain (an activity's own error, not "Activity task failed"). */
export function innermostMessage(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  for (
    let cur: unknown = err instanceof ActivityFailure ? err.cause : null;
    cur instanceof Error;
    cur = (cur as { cause?: unknown }).cause
  ) {
    message = cur.message;
  }
  return message;
}
