/**
 * What the aggregate phase is waiting for, carried in its heartbeat (activities/aggregate-run.ts)
 * so that the terminal and `reverify status` can say it within seconds (src/cli/retry-notices.ts),
 * instead of nothing until an attempt fails.
 */

/** A `POST /aggregate_metrics` in flight: to which server, since when (epoch ms), and its deadline. */
export interface AggregateWait {
  server: string;
  url: string;
  since: number;
  timeoutMs: number;
}

/** A request answered within this long is not mentioned. */
export const AGGREGATE_WAIT_NOTICE_MS = 5_000;

/** True when `details` (a heartbeat's) is an AggregateWait. */
export function isAggregateWait(details: unknown): details is AggregateWait {
  const w = details as Partial<AggregateWait> | null;
  return (
    typeof w === 'object' && w !== null && typeof w.server === 'string' && typeof w.since === 'number' && typeof w.timeoutMs === 'number'
  );
}

/** The line that says what the phase waits for, once it has waited `AGGREGATE_WAIT_NOTICE_MS`; null before. */
export function aggregateWaitLine(w: AggregateWait, now: number): string | null {
  const waited = now - w.since;
  if (waited < AGGREGATE_WAIT_NOTICE_MS) return null;
  return (
    `Waiting: resources server '${w.server}' at ${w.url} has not answered POST /aggregate_metrics for ${Math.floor(waited / 1000)} s; ` +
    `it gets ${Math.round(w.timeoutMs / 1000)} s at this size, then the run ends with its outputs complete (Ctrl-C stops waiting)`
  );
}
