/**
 * A batch's allowance of `/verify` requests (workflows/budget.ts): every try and probe takes one
 * before it is sent, counted in the checkpoint (so a retried attempt goes on counting); once spent,
 * the next try throws AllowanceSpent and the row it was for stays unfinished (held, not failed).
 */
import type { VerifierClient } from '../../src/verifier/client.js';
import type { Checkpoint } from './checkpoint.js';

/** Thrown instead of sending a request beyond the allowance. */
export class AllowanceSpent extends Error {
  constructor() {
    super('the batch spent its allowance of /verify requests');
    this.name = 'AllowanceSpent';
  }
}

export class RequestAllowance {
  /** @param allowance requests this activity may make; undefined: no limit (only counted) */
  constructor(
    private readonly cp: Checkpoint,
    private readonly allowance: number | undefined,
  ) {
    cp.requestsUsed ??= 0;
  }

  get used(): number {
    return this.cp.requestsUsed ?? 0;
  }

  /** True when no further request may be sent. */
  spent(): boolean {
    return this.allowance !== undefined && this.used >= this.allowance;
  }

  /** Takes one request of the allowance, or throws AllowanceSpent. */
  take(): void {
    if (this.spent()) throw new AllowanceSpent();
    this.cp.requestsUsed = this.used + 1;
  }

  /** `client` whose every `verifyOnce` takes one request first. */
  client(client: Pick<VerifierClient, 'verifyOnce'>): Pick<VerifierClient, 'verifyOnce'> {
    return {
      verifyOnce: (url, body, signal) => {
        this.take();
        return client.verifyOnce(url, body, signal);
      },
    };
  }
}
