/**
 * The rows of a batch whose `/verify` failed on their own (retries spent while the same server
 * answers other rows): each attempt gives such a row a strike, and a row with all its strikes is
 * set aside (written to the sidecar as `transient`). Throttling and outages are not strikes: they
 * fail the attempt, and Temporal retries it later.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import { FailureType } from '../../src/contract/failure-types.js';
import type { Stamps } from '../../src/contract/outcome.js';
import type { PlanRecord } from '../../src/planning/plan-file.js';
import type { VerifierClient } from '../../src/verifier/client.js';
import { VerifierUnavailableError } from '../../src/verifier/errors.js';
import type { Checkpoint } from './checkpoint.js';
import { rowPlace, sidecarPathOf } from './planned-rows.js';
import { loneRowFailure, serverAnswersOthers } from './probe.js';
import type { VerifyBatchRequest } from './request.js';
import type { ReplyCounts, ServerReplies } from './server-replies.js';

/**
 * Activity attempts in which a row's `/verify` must exhaust its retries (a 5xx, a reset, a
 * timeout: anything but throttling) while the same server answers another row of the batch,
 * before the row is written to the sidecar as `transient`.
 */
export const ROW_FAILURE_STRIKES = 3;

/** A row this attempt gave a strike (its failure is its own: the server answers others). */
interface Struck {
  row: number;
  error: VerifierUnavailableError;
  stamps: Stamps;
}

/** What a strike needs of its batch run. */
export interface StrikeContext {
  req: VerifyBatchRequest;
  records: PlanRecord[];
  checkpoint: Checkpoint;
  replies: ServerReplies;
  /** Sends through the allowance (a probe is a request like any other). */
  client: Pick<VerifierClient, 'verifyOnce'>;
  /** For the liveness route of a server with no other row to probe with. */
  http: VerifierClient;
  signal: AbortSignal;
  log: Context['log'];
}

export class RowStrikes {
  /** The row the server last answered 2xx in this attempt (a known-good probe). */
  lastAnswered: number | null = null;
  /** The rows struck in this attempt, first first. */
  readonly struck: Struck[] = [];

  constructor(private readonly batch: StrikeContext) {}

  /**
   * After a row's retries are spent: throttling (429), or an outage (every row failing, the probe
   * too), fails the attempt (rethrown: Temporal retries it later, without bound). Otherwise the row
   * gets a strike; returns its error when it has all its strikes (the row is then set aside). A row
   * alone in its batch is probed by what the server answered this process since `mark` (probe.ts).
   */
  async strike(err: unknown, i: number, stamps: Stamps, url: string, mark: ReplyCounts): Promise<VerifierUnavailableError | null> {
    if (!(err instanceof VerifierUnavailableError) || err.lastStatus === 429) throw err;
    const { req, records, checkpoint, replies, client, http, signal } = this.batch;
    const send = (body: string) => client.verifyOnce(url, body, signal);
    const alone = () => loneRowFailure(replies.since(url, mark), err.tries, () => http.answers(url, signal));
    if (!(await serverAnswersOthers(req, records, i, this.lastAnswered, send, alone))) throw err;
    const strikes = (checkpoint.strikes[i] = (checkpoint.strikes[i] ?? 0) + 1);
    if (strikes < ROW_FAILURE_STRIKES) {
      this.struck.push({ row: i, error: err, stamps });
      return null;
    }
    this.batch.log.warn(
      `${rowPlace(req, records[i], stamps)}: /verify failed ${strikes} times (last: ${err.lastReason}) while the server answered other rows; ` +
        `written to ${sidecarPathOf(req)} as transient (--resume tries it again)`,
    );
    return err;
  }

  /** The retryable failure of an attempt that left struck rows: it names the first by file:line and key. */
  failure(): ApplicationFailure {
    const { req, records, checkpoint } = this.batch;
    const { row, error, stamps } = this.struck[0];
    return ApplicationFailure.retryable(
      `${this.struck.length} row(s) of the batch failed while the server answered other rows; retried later, written to the sidecar ` +
        `as transient after ${ROW_FAILURE_STRIKES} attempts (${rowPlace(req, records[row], stamps)}, attempt ${checkpoint.strikes[row]}: ${error.message})`,
      FailureType.RowsFailing,
    );
  }
}
