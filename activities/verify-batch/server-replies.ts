/**
 * What each resources server answered to the `/verify` requests of this worker process, for a row
 * whose batch has no other row of its server to probe with (`--batch-size 1`, a re-judgment round
 * of one row): did the server answer other rows while this row failed, fail them too, or was
 * nothing else sent (then its liveness route `GET /` decides, see `probe.ts`)?
 */
import type { VerifierClient, VerifyReply } from '../../src/verifier/client.js';

/** The replies of one server counted so far: 2xx, and retryable failures. */
export interface ReplyCounts {
  answered: number;
  failed: number;
}

export class ServerReplies {
  private readonly counts = new Map<string, ReplyCounts>();

  /** The counts of `url` now (a mark to compare with later: `since`). */
  mark(url: string): ReplyCounts {
    return { ...(this.counts.get(url) ?? { answered: 0, failed: 0 }) };
  }

  /** The replies of `url` counted since `mark`. */
  since(url: string, mark: ReplyCounts): ReplyCounts {
    const now = this.mark(url);
    return { answered: now.answered - mark.answered, failed: now.failed - mark.failed };
  }

  /** `client` whose every `/verify` reply is counted for its server. */
  client(client: Pick<VerifierClient, 'verifyOnce'>): Pick<VerifierClient, 'verifyOnce'> {
    return {
      verifyOnce: async (url, body, signal) => {
        const reply = await client.verifyOnce(url, body, signal);
        this.note(url, reply);
        return reply;
      },
    };
  }

  private note(url: string, reply: VerifyReply): void {
    const c = this.counts.get(url) ?? { answered: 0, failed: 0 };
    if (reply.kind === 'ok') c.answered++;
    else if (reply.kind === 'retryable') c.failed++;
    this.counts.set(url, c);
  }
}
