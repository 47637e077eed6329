/**
 * How the run's `/verify` concurrency is split between batch activities. Pure and deterministic
 * (the workflow imports it). The workflow keeps `window` batches in flight, each allowed
 * `parallelism` requests, so `window * parallelism <= concurrency` always holds: the limit is
 * global across every worker, whatever the number of workers.
 */
export interface WindowShape {
  window: number;
  parallelism: number;
}

/** Batches in flight aimed for when concurrency allows it: enough to hide a slow batch's tail. */
export const TARGET_WINDOW = 4;

/**
 * @param concurrency the run's ceiling of `/verify` requests in flight
 * @param batchSize rows per batch (a batch never needs more lanes than rows)
 * @param batchesLeft batches not yet finished: a small run spreads its concurrency over fewer batches
 */
export function windowShape(concurrency: number, batchSize: number, batchesLeft = TARGET_WINDOW): WindowShape {
  const target = Math.max(1, Math.min(TARGET_WINDOW, batchesLeft));
  const parallelism = Math.max(1, Math.min(batchSize, Math.ceil(concurrency / target)));
  return { window: Math.max(1, Math.floor(concurrency / parallelism)), parallelism };
}
