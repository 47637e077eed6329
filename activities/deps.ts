import { VerifierClient } from '../src/verifier/client.js';
import { ThrottleGate } from '../src/verifier/throttle-gate.js';
import { LanePool } from './verify-batch/lane-pool.js';
import { ServerReplies } from './verify-batch/server-replies.js';

/** What activities need from their process: shared HTTP pools, and the batches' pooled lanes. */
export interface ActivityDeps {
  /** A keep-alive client whose request timeout is `timeoutMs` (one per distinct timeout). */
  verifier(timeoutMs: number): VerifierClient;
  /** The `/verify` lanes of the batches this process runs, pooled per run and round (verify-batch/lane-pool.ts). */
  lanes: LanePool;
  /** What each server answered to this process's `/verify` requests (verify-batch/server-replies.ts). */
  replies: ServerReplies;
  /** Holds new rows to a server back while a refused one waits out its 429's Retry-After (src/verifier/throttle-gate.ts). */
  throttle: ThrottleGate;
}

/**
 * Keep-alive connections a worker may open to one resources server: far above any run's
 * `--concurrency` of one machine, since the lanes (the run's ceiling) bound the requests in flight
 * and connections open only when needed. At 256, a run at `--concurrency 1024` kept 256 requests in
 * flight and the rest queued in the pool (bench/README.md, issue 33 item 1).
 */
export const CONNECTIONS_PER_SERVER = 8192;

/** Default deps for a worker process; `close()` releases the HTTP pools at shutdown. */
export function createActivityDeps(opts: { connectionsPerServer?: number } = {}): ActivityDeps & { close(): Promise<void> } {
  const clients = new Map<number, VerifierClient>();
  return {
    lanes: new LanePool(),
    replies: new ServerReplies(),
    throttle: new ThrottleGate(),
    verifier(timeoutMs) {
      let c = clients.get(timeoutMs);
      if (!c) {
        c = new VerifierClient({ connectionsPerServer: opts.connectionsPerServer ?? CONNECTIONS_PER_SERVER, requestTimeoutMs: timeoutMs });
        clients.set(timeoutMs, c);
      }
      return c;
    },
    async close() {
      await Promise.all([...clients.values()].map((c) => c.close()));
      clients.clear();
    },
  };
}
