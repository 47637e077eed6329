/**
 * How the aggregate phase sends one group to `/aggregate_metrics`, and which failures it waits out.
 * Every row is committed by then, so a failure that retrying cannot fix must end the run (with the
 * command that computes the metrics later) instead of holding it; only an outage of the server is
 * waited out without bound, as for `/verify`:
 * - the server answered what retrying cannot change (`rejected`: a 4xx, a reply that is not the
 *   expected JSON): not retried, the phase fails (`AggregationFailed`);
 * - it is busy (408, 429, 503): the attempt fails and Temporal retries it, without bound;
 * - no answer, a timeout, a reset or another 5xx: if the server does not answer `GET /` either, it
 *   is down: the same as busy. If it does, its aggregation fails on these rows (a duplicate key, a
 *   NaN metric, a crash of the handler): tried `AGGREGATION_SERVER_ERROR_TRIES` times, then the
 *   phase fails;
 * - no complete reply within the request's deadline (scaled by the rows: src/contract/aggregate-timeout.ts):
 *   not retried, the phase fails (the server had the time an aggregation of this size takes).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../src/contract/failure-types.js';
import type { AggregateReplyFile } from '../src/aggregation/aggregate-reply.js';
import type { PostAggregateMetrics } from '../src/aggregation/aggregate-metrics-file.js';
import { AggregateMetricsError, aggregateFailureKind } from '../src/verifier/errors.js';

/** Tries of a group while the server is up but its aggregation keeps failing (see the file comment). */
export const AGGREGATION_SERVER_ERROR_TRIES = 3;
/** Wait before the second such try; doubled before each later one. */
export const AGGREGATION_SERVER_ERROR_DELAY_MS = 10_000;

/** What a patient POST needs: one try, and whether a server answers at all. */
export interface AggregateTransport {
  post(serverName: string, serverUrl: string, bodyPath: string, replyPath: string, signal: AbortSignal): Promise<AggregateReplyFile>;
  answers(serverUrl: string, signal: AbortSignal): Promise<boolean>;
}

/** The phase cannot succeed: a non-retryable `AggregationFailed` with `message` (the run ends, exit 2). */
function cannotSucceed(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FailureType.AggregationFailed);
}

/** Waits `ms`; rejects with `signal`'s reason when it aborts. */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (err) {
    throw signal.aborted ? signal.reason : err;
  }
}

/**
 * A `PostAggregateMetrics` over `transport` for the servers `servers` (name -> URL) that sorts its
 * failures as the file comment says: it throws a non-retryable `AggregationFailed` when the phase
 * cannot succeed, and the `AggregateMetricsError` itself (retryable) when the server is down or busy.
 */
export function patientPost(
  transport: AggregateTransport,
  servers: Readonly<Record<string, string>>,
  delayMs = AGGREGATION_SERVER_ERROR_DELAY_MS,
): PostAggregateMetrics {
  return async (server, bodyPath, replyPath, signal) => {
    const url = servers[server];
    for (let tries = 1; ; tries++) {
      try {
        return await transport.post(server, url, bodyPath, replyPath, signal);
      } catch (err) {
        if (!(err instanceof AggregateMetricsError)) throw err;
        const kind = aggregateFailureKind(err.status);
        if (kind === 'rejected') throw cannotSucceed(err.message);
        if (err.timedOut) throw cannotSucceed(`${err.message}; not retried: the deadline scales with the rows`);
        if (kind === 'busy' || !(await transport.answers(url, signal))) throw err;
        if (tries >= AGGREGATION_SERVER_ERROR_TRIES) {
          throw cannotSucceed(`${err.message} (${tries} tries, while the server is up: it answers GET /)`);
        }
        await pause(delayMs * 2 ** (tries - 1), signal);
      }
    }
  };
}
