/**
 * The resources server kept answering with retryable failures (transport errors, timeouts,
 * 408/429/5xx) until the retry budget of one call was spent. Activities let this error escape so
 * the activity attempt fails and Temporal retries it later with its own backoff.
 */
export class VerifierUnavailableError extends Error {
  override readonly name = 'VerifierUnavailableError';
  readonly serverUrl: string;
  readonly serverName: string | undefined;
  readonly tries: number;
  readonly lastReason: string;
  readonly lastStatus: number | undefined;
  /** The last reply's body excerpt, when the server answered. */
  readonly lastExcerpt: string | undefined;

  constructor(args: {
    serverUrl: string;
    serverName?: string;
    tries: number;
    lastReason: string;
    lastStatus?: number;
    lastExcerpt?: string;
  }) {
    const who =
      args.serverName !== undefined
        ? `resources server '${args.serverName}' at ${args.serverUrl}`
        : `resources server at ${args.serverUrl}`;
    super(`${who} is unavailable: POST /verify failed ${args.tries} time(s), last: ${args.lastReason}`);
    this.serverUrl = args.serverUrl;
    this.serverName = args.serverName;
    this.tries = args.tries;
    this.lastReason = args.lastReason;
    this.lastStatus = args.lastStatus;
    this.lastExcerpt = args.lastExcerpt;
  }
}

/** `POST /aggregate_metrics` failed (non-2xx, transport error, timeout or a malformed reply). */
export class AggregateMetricsError extends Error {
  override readonly name = 'AggregateMetricsError';
  readonly serverName: string;
  readonly serverUrl: string;
  /** HTTP status when the server answered; undefined for transport errors and timeouts. */
  readonly status: number | undefined;

  constructor(serverName: string, serverUrl: string, detail: string, status?: number) {
    super(`resources server '${serverName}' at ${serverUrl}: POST /aggregate_metrics failed: ${detail}`);
    this.serverName = serverName;
    this.serverUrl = serverUrl;
    this.status = status;
  }
}
