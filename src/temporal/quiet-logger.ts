import { ApplicationFailure, type LogLevel, type LogMetadata } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';
import { LONG_RETRY, nextTryMs } from '../contract/activity-retry.js';
import { TERMINAL_FAILURE_TYPES } from '../contract/failure-types.js';
import { VerifierUnavailableError } from '../verifier/errors.js';

/** Meta fields never logged: a task token is a credential-like blob of no use to a reader. */
const HIDDEN = ['taskToken'];

/** A failure the run expects and handles (an outage, rows failing, bad input): no stack trace. */
function expected(err: unknown): err is Error {
  return err instanceof ApplicationFailure || err instanceof VerifierUnavailableError;
}

/** One line for a failed batch attempt: what failed, which attempt, and the next try. */
export function failedBatchLine(meta: LogMetadata, err: Error): string {
  const attempt = typeof meta.attempt === 'number' ? meta.attempt : 1;
  const what = `${String(meta.activityType ?? 'activity')} ${String(meta.activityId ?? '')} of ${String(meta.workflowId ?? '?')}`;
  const type = err instanceof ApplicationFailure ? (err.type ?? null) : null;
  const terminal = (err instanceof ApplicationFailure && err.nonRetryable) || (type !== null && TERMINAL_FAILURE_TYPES.includes(type));
  const next = terminal ? 'not retried: the run fails' : `next try in about ${Math.round(nextTryMs(LONG_RETRY, attempt) / 1000)}s`;
  return `${what.replace(/ {2}/, ' ')} attempt ${attempt} failed: ${err.message}; ${next}`;
}

/**
 * The worker's logger: Temporal's default, except that a failed activity attempt whose failure is
 * expected is one line (what failed, attempt, next try), its details and stack at debug level, and
 * that task tokens are never logged.
 */
export class QuietLogger extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const rest: LogMetadata = { ...(meta ?? {}) };
    for (const k of HIDDEN) delete rest[k];
    const err: unknown = rest.error;
    if (message === 'Activity failed' && level === 'WARN' && expected(err)) {
      super.log('WARN', failedBatchLine(rest, err));
      super.log('DEBUG', message, rest);
      return;
    }
    super.log(level, message, rest);
  }
}
