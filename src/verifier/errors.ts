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

/**
 * What an `/aggregate_metrics` failure says about retrying it:
 * - `rejected`: the server answered what retrying the same body cannot change (a 2xx that is not
 *   the reply of spec §2.3, a 1xx/3xx, a 4xx other than 408/429);
 * - `busy`: it asked to be asked again later (408, 429, 503): an outage, waited out;
 * - `unclear`: no answer, a timeout, a reset or another 5xx: an outage if the server is down, else
 *   its aggregation fails on these rows (tell them apart by asking whether it answers at all).
 */
export type AggregateFailureKind = 'rejected' | 'busy' | 'unclear';

/** The kind of an `/aggregate_metrics` failure from its HTTP status (undefined: no answer). */
export function aggregateFailureKind(status: number | undefined): AggregateFailureKind {
  if (status === undefined) return 'unclear';
  if (status === 408 || status === 429 || status === 503) return 'busy';
  return status >= 500 ? 'unclear' : 'rejected';
}

/** `POST /aggregate_metrics` failed (non-2xx, transport error, timeout or a malformed reply). */
export class AggregateMetricsError extends Error {
  override readonly name = 'AggregateMetricsError';
  readonly serverName: string;
  readonly serverUrl: string;
  /** HTTP status when the server answered; undefined for transport errors and timeouts. */
  readonly status: number | undefined;
  /** No complete reply within the request's deadline. */
  readonly timedOut: boolean;

  constructor(serverName: string, serverUrl: string, detail: string, status?: number, timedOut = false) {
    super(`resources server '${serverName}' at ${serverUrl}: POST /aggregate_metrics failed: ${detail}`);
    this.serverName = serverName;
    this.serverUrl = serverUrl;
    this.status = status;
    this.timedOut = timedOut;
  }
}
