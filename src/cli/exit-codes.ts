import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { ConfigError } from '../contract/errors.js';
import { USER_FAILURE_TYPES } from '../contract/failure-types.js';

/** Exit statuses: 0 success, 1 user/config error, 2 run failed. */
export const EXIT_OK = 0;
export const EXIT_USER_ERROR = 1;
export const EXIT_RUN_FAILED = 2;

/** The innermost Temporal failure message of an error chain, with its type. */
function rootFailure(err: unknown): { message: string; type?: string } {
  let cur: unknown = err;
  let best: { message: string; type?: string } = { message: String((err as Error)?.message ?? err) };
  while (cur instanceof Error) {
    if (cur instanceof ApplicationFailure) best = { message: cur.message, type: cur.type ?? undefined };
    else if (cur instanceof TemporalFailure && !(cur instanceof WorkflowFailedError)) best = { message: cur.message };
    cur = (cur as { cause?: unknown }).cause;
  }
  return best;
}

/** Turns any error of a command into one printed line and an exit status. */
export function describeFailure(err: unknown): { line: string; code: number } {
  if (err instanceof ConfigError) return { line: `Error: ${err.message}`, code: EXIT_USER_ERROR };
  const root = rootFailure(err);
  if (root.type && USER_FAILURE_TYPES.has(root.type)) return { line: `Error: ${root.message}`, code: EXIT_USER_ERROR };
  return { line: `Error: the run failed: ${root.message}`, code: EXIT_RUN_FAILED };
}
