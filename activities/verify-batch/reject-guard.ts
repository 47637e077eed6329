import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../src/contract/failure-types.js';
import { rejectedReplyName } from '../../src/verifier/verify-reply.js';

/**
 * The run's first replies, if all are 4xx rejections, mean the server or the config is wrong: the
 * batch that sees the `limit`-th such reply stops the run (`limit` 0: this batch does not guard).
 * The failure names the last reply by its status only: it goes into the workflow history.
 */
export class RejectGuard {
  private replies = 0;
  private rejected = 0;

  constructor(private readonly limit: number) {}

  /** Counts one reply; throws the run's `VerifyRejected` failure when the guard trips. */
  observe(reply: { kind: 'ok' } | { kind: 'rejected'; status: number }, server: string, url: string): void {
    this.replies++;
    if (reply.kind !== 'rejected') return;
    this.rejected++;
    if (this.limit > 0 && this.replies === this.limit && this.rejected === this.replies) {
      throw ApplicationFailure.nonRetryable(
        `resources server '${server}' (${url}) rejected the first ${this.replies} /verify requests ` +
          `(last: ${rejectedReplyName(reply.status)}). The server or the config is wrong: check that --inputs/--rollouts ` +
          'belong to this resources server and that it is the right server; nothing was committed from this batch.',
        FailureType.VerifyRejected,
      );
    }
  }
}
