/** How an attempt of a batch ends other than by finishing: cancelled, its worker shutting down (held: activities/verify-batch/held.ts), failed. */
import { hostname } from 'node:os';
import { ApplicationFailure } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import { attemptLine } from '../../src/contract/batch-audit.js';
import { VerifierUnavailableError } from '../../src/verifier/errors.js';

/** True when the workflow asked this attempt to stop (`reverify cancel`, or a failing run stopping its batches). */
export function cancelledByRun(ctx: Context): boolean {
  return ctx.cancellationSignal.aborted && ctx.cancellationDetails?.cancelRequested === true;
}

/** The audit line of a failed attempt: its number, worker (as Temporal names it by default), time, failure type and status. */
export function failedAttemptLine(attempt: number, err: unknown, struck: VerifierUnavailableError | undefined): string {
  const status = (err instanceof VerifierUnavailableError ? err : struck)?.lastStatus ?? null;
  const type = err instanceof ApplicationFailure ? (err.type ?? 'ApplicationFailure') : err instanceof Error ? err.name : 'Error';
  return attemptLine(attempt, `${process.pid}@${hostname()}`, new Date(), type, status);
}

/** True when this attempt is being cancelled because its worker shuts down (not by `reverify cancel`). */
export function shuttingDown(ctx: Context): boolean {
  const reason: unknown = ctx.cancellationSignal.reason;
  return ctx.cancellationSignal.aborted && reason instanceof Error && reason.message === 'WORKER_SHUTDOWN';
}
