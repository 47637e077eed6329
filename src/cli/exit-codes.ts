import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { ConfigError } from '../contract/errors.js';
import { USER_FAILURE_TYPES } from '../contract/failure-types.js';
import { redactUserinfo } from '../contract/secrets.js';
import { DiskWriteError } from '../io/write-errors.js';
import { TemporalUnreachable, unreachableReason } from '../temporal/server-unreachable.js';
import { GateFailedError } from './gate-ending.js';
import { isCancelledRun, MetricsMissingError, RunCancelledError } from './run-endings.js';
import { UploadFailedError } from './upload-command.js';

/**
 * Exit statuses: 0 success (every rollout scored, or its failure terminal; or a clean `--stop-when`
 * early stop, stopped-early.ts), 1 user/config error,
 * 2 run failed (also when the rows are complete but the aggregate metrics cannot be computed),
 * 3 the run completed but rollouts are still missing from the score (from its coverage: neither
 * scored, nor omitted, nor failed terminally; `exitStatusOf` in end-summary.ts), 4 the run was cancelled (`reverify cancel`), 5 a
 * `--fail-if` gate failed (gate-ending.ts), 6 the Temporal server cannot be reached (the run, if any, is intact).
 */
export const EXIT_OK = 0;
export const EXIT_USER_ERROR = 1;
export const EXIT_RUN_FAILED = 2;
/** The run completed, its outputs and metrics are written, but rollouts are missing from the score (end-summary.ts). */
export const EXIT_ROLLOUTS_MISSING = 3;
export const EXIT_CANCELLED = 4;
/** The Temporal server cannot be reached or was lost mid-run: nothing is lost, run the command again when it is back. */
export const EXIT_TEMPORAL_UNREACHABLE = 6;
/** A `--fail-if` rule of `run` or `report` holds, or cannot be evaluated (gate-ending.ts): the CI gate fails. */
export const EXIT_GATE_FAILED = 5;

/** The innermost Temporal failure message of an error chain, with its type. */
export function rootFailure(err: unknown): { message: string; type?: string } {
  let cur: unknown = err;
  let best: { message: string; type?: string } = { message: String((err as Error)?.message ?? err) };
  while (cur instanceof Error) {
    if (cur instanceof ApplicationFailure) best = { message: cur.message, type: cur.type ?? undefined };
    else if (cur instanceof TemporalFailure && !(cur instanceof WorkflowFailedError)) best = { message: cur.message };
    cur = (cur as { cause?: unknown }).cause;
  }
  return best;
}

/** Turns any error of a command into one printed line (never with URL credentials) and an exit status. */
export function describeFailure(err: unknown): { line: string; code: number } {
  const { line, code } = classifyFailure(err);
  return { line: redactUserinfo(line), code };
}

function classifyFailure(err: unknown): { line: string; code: number } {
  if (err instanceof ConfigError) return { line: `Error: ${err.message}`, code: EXIT_USER_ERROR };
  if (err instanceof TemporalUnreachable) return { line: `Error: ${err.message}`, code: EXIT_TEMPORAL_UNREACHABLE };
  const unreachable = unreachableReason(err);
  if (unreachable !== null) {
    const line = `Error: lost the connection to the Temporal server (${unreachable}); nothing is lost: when it answers again, run the same command again`;
    return { line, code: EXIT_TEMPORAL_UNREACHABLE };
  }
  if (err instanceof MetricsMissingError) return { line: err.message, code: EXIT_RUN_FAILED };
  if (err instanceof UploadFailedError) return { line: `Error: ${err.message}`, code: EXIT_RUN_FAILED };
  if (err instanceof GateFailedError) return { line: err.message, code: EXIT_GATE_FAILED };
  if (err instanceof RunCancelledError) return { line: err.message, code: EXIT_CANCELLED };
  if (isCancelledRun(err))
    return { line: 'Cancelled: the run was cancelled. To continue, run the same command with --resume.', code: EXIT_CANCELLED };
  const root = rootFailure(err);
  if (root.type && USER_FAILURE_TYPES.has(root.type)) return { line: `Error: ${root.message}`, code: EXIT_USER_ERROR };
  // A full disk and the like: the message names the file and what to do.
  if (err instanceof DiskWriteError || root.type === 'DiskWriteError') return { line: `Error: ${root.message}`, code: EXIT_RUN_FAILED };
  return { line: `Error: the run failed: ${root.message}`, code: EXIT_RUN_FAILED };
}
