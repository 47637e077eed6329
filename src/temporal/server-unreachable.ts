/**
 * The Temporal server cannot be reached: at connect, or lost during a run (killed, restarted, network).
 * Nothing is lost then: committed output stays on disk and the run is durable in the server's store,
 * so the message says how to go on instead of "the run failed".
 */

/** gRPC status UNAVAILABLE: the client's own retries are spent and the server still does not answer. */
const GRPC_UNAVAILABLE = 14;

const ERRNO = /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE)\b/;

/** The errors of a chain of causes, outermost first. */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let cur = err; cur instanceof Error && out.length < 20; cur = (cur as { cause?: unknown }).cause) out.push(cur);
  return out;
}

/**
 * A short reason (`UNAVAILABLE, ECONNREFUSED`) when `err` or one of its causes says the Temporal
 * server is unreachable (gRPC UNAVAILABLE, or no connection before the connect deadline); else null.
 */
export function unreachableReason(err: unknown): string | null {
  for (const e of chain(err)) {
    const { code, message } = e as { code?: unknown; message: string };
    const unavailable = code === GRPC_UNAVAILABLE;
    if (unavailable || message === 'Failed to connect before the deadline') {
      const errno = ERRNO.exec(message)?.[1];
      const what = unavailable ? 'UNAVAILABLE' : 'no connection before the deadline';
      return errno ? `${what}, ${errno}` : what;
    }
  }
  return null;
}

/** What a lost run was writing, for the message. */
export interface LostRun {
  output: string;
  /** True for the embedded dev server: running the command again restarts it. */
  embedded: boolean;
}

/** The Temporal server at `address` cannot be reached; with `run`, it was lost while following that run. */
export class TemporalUnreachable extends Error {
  override readonly name = 'TemporalUnreachable';

  constructor(
    readonly address: string,
    reason: string,
    readonly run: LostRun | null,
  ) {
    super(
      run === null
        ? `cannot reach the Temporal server at ${address} (${reason}): start it (\`reverify server start\`, or check TEMPORAL_ADDRESS), then run the same command again`
        : `lost the Temporal server at ${address} (${reason}). The run is intact: the rows committed to ${run.output} are safe and the ` +
            'server keeps the run in its store. ' +
            (run.embedded
              ? 'Run the same command again: it restarts the embedded server and continues the run.'
              : `When the server at ${address} answers again, run the same command again to continue the run.`),
    );
  }
}
