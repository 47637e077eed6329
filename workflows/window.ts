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

/** Batches in flight aimed for at least, when concurrency allows it: enough to hide a slow batch's tail. */
export const TARGET_WINDOW = 4;

/**
 * The most lanes one batch is given while more batches can be in flight: above 4 × this
 * concurrency, the window holds more batches rather than larger shares. A batch holds its share
 * until its slowest row is answered (a judge's slowest answers take 10–20 × its median), while its
 * lanes send the younger batches' rows (activities/verify-batch/lane-pool.ts); at a high
 * concurrency the window's batches ran out of rows during these waits, and every lane idled. With
 * 32 lanes a share, 256 lanes emptied 8 batches' rows in ≈ 20 s and then waited, several times a
 * run, for one of them to end (σ 1.21: down to 26 in flight, 2.5 s without a request); 16 batches of 16 hold twice
 * the rows (bench/README.md, "Shares of 16 lanes").
 */
export const MAX_SHARE = 16;

/** The most batches in flight (each an activity of a worker, with its open files and rows read ahead). */
export const MAX_WINDOW = 32;

/** Batches in flight aimed for at `concurrency`: TARGET_WINDOW, or more so that no share exceeds MAX_SHARE. */
export function targetWindow(concurrency: number): number {
  return Math.min(MAX_WINDOW, Math.max(TARGET_WINDOW, Math.ceil(concurrency / MAX_SHARE)));
}

/**
 * @param concurrency the run's ceiling of `/verify` requests in flight
 * @param batchSize rows per batch (a batch never needs more lanes than rows)
 * @param batchesLeft batches not yet finished: a small run spreads its concurrency over fewer batches
 * @param parts the batches are parts of batches this many times smaller (workflows/segments.ts
 *   `tailOf`): the window holds that many times more of them, up to MAX_WINDOW
 */
export function windowShape(concurrency: number, batchSize: number, batchesLeft = targetWindow(concurrency), parts = 1): WindowShape {
  const target = Math.max(1, Math.min(MAX_WINDOW, targetWindow(concurrency) * parts, batchesLeft));
  const up = shapeOf(concurrency, batchSize, Math.ceil(concurrency / target));
  const down = shapeOf(concurrency, batchSize, Math.floor(concurrency / target));
  // The share that sets the most of the ceiling to work over the `target` batches: rounded up, fewer
  // of them fit (1024 over 20 batches: 19 × 52 = 988 lanes); rounded down, all do (20 × 51 = 1,020).
  const used = (s: WindowShape) => Math.min(s.window, target) * s.parallelism;
  return used(down) > used(up) ? down : up;
}

/** The window of batches of `share` lanes each (at least 1, at most the batch's rows). */
function shapeOf(concurrency: number, batchSize: number, share: number): WindowShape {
  const parallelism = Math.max(1, Math.min(batchSize, share));
  return { window: Math.max(1, Math.floor(concurrency / parallelism)), parallelism };
}
