/**
 * How a batch's sending stops, as named state: the first lane that fails stops the others (`fail`:
 * their requests are aborted, nothing more starts); a cancellation by the run drains (no new row,
 * the requests in flight get CANCEL_GRACE_MS, then they are aborted); any other cancellation
 * (worker shutdown, heartbeat timeout) aborts at once.
 */
import { setMaxListeners } from 'node:events';
import type { Context } from '@temporalio/activity';
import { cancelledByRun } from './attempt-ends.js';

/**
 * When the run is cancelled (`reverify cancel`), the batch starts no new row and gives the
 * requests already in flight this long to answer (their verdicts are paid for), then hands back
 * what it finished: the workflow commits it before the run ends.
 */
export const CANCEL_GRACE_MS = 10_000;

export class BatchStops {
  /** Aborted by the first lane that fails. */
  private readonly failed = new AbortController();
  /** Aborted by a cancellation other than the run's, or when the drain's grace is over. */
  private readonly hard = new AbortController();
  /** Ends the drain's grace (set once the run cancels the batch). */
  private drainTimer: NodeJS.Timeout | undefined;
  /** Cancelled by the run: no new row starts, the requests in flight may still answer. */
  draining = false;
  /** The first lane's failure, if one failed. */
  error: Error | undefined;
  /** What every request in flight listens to: either controller aborting. */
  readonly signal: AbortSignal;

  constructor(private readonly ctx: Context) {
    this.signal = AbortSignal.any([this.hard.signal, this.failed.signal]);
    setMaxListeners(0, this.signal); // every request in flight listens to it
    ctx.cancellationSignal.addEventListener('abort', () => this.cancelled());
  }

  /** False once no new row may start. */
  going(): boolean {
    return !this.signal.aborted && !this.draining;
  }

  /** A lane or a recording threw: the batch fails with the first such error. */
  fail(err: Error): void {
    this.error ??= err;
    this.failed.abort();
  }

  /** A request is about to be retried: while draining there are no retries (a failing server would only hold the run up). */
  retrying(): void {
    if (this.draining) this.hard.abort(this.ctx.cancellationSignal.reason);
  }

  /** Clears the drain's timer. */
  dispose(): void {
    clearTimeout(this.drainTimer);
  }

  private cancelled(): void {
    const reason: unknown = this.ctx.cancellationSignal.reason;
    if (!cancelledByRun(this.ctx)) return this.hard.abort(reason);
    this.draining = true;
    this.drainTimer = setTimeout(() => this.hard.abort(reason), CANCEL_GRACE_MS);
  }
}
