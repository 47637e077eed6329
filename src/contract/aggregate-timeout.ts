/**
 * How long one `POST /aggregate_metrics` may take before the aggregate phase gives up on it: what
 * a real aggregation of that many rows can take (the upload of the body, the server's pass over the
 * rows, the reply), generously: a floor of `--request-timeout` (at least 5 minutes), plus 2 ms per
 * row of the main output (10^6 rows: about 33 minutes more). A timeout is not retried (the server
 * had that time): the run ends with its outputs complete and the command that computes the metrics
 * later (activities/aggregate-post.ts). Pure: the workflow computes it.
 */

/** The least an aggregation is given, whatever its size. */
export const AGGREGATE_TIMEOUT_FLOOR_MS = 5 * 60_000;
/** What each row adds. */
export const AGGREGATE_TIMEOUT_PER_ROW_MS = 2;

/** The deadline of one `POST /aggregate_metrics` of a run with `rows` rows in its main output. */
export function aggregateTimeoutMs(requestTimeoutMs: number, rows: number): number {
  return Math.max(requestTimeoutMs, AGGREGATE_TIMEOUT_FLOOR_MS) + Math.max(0, rows) * AGGREGATE_TIMEOUT_PER_ROW_MS;
}
