/** Defaults of `reverify run`'s options (values held in ms where the flag takes seconds). */

/** Default of `--concurrency` (NeMo Gym: unbounded). */
export const DEFAULT_CONCURRENCY = 32;
/** Default of `--request-timeout` (held in ms): 10 minutes. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;
/** Default delay before the first re-judgment round: a minute (doubling per round). */
export const DEFAULT_REJUDGE_DELAY_MS = 60_000;
/**
 * Default of `--batch-size`. Each batch costs a fixed time in which its `/verify` slots idle (its
 * first rows read and part files opened before its first request; its parts published, its
 * completion reported and the next batch launched after its last): ≈ 100 ms at 20 ms latency on
 * 2 cores, an eighth of a 500-row batch, a sixteenth of a 1,000-row one. A batch holds two
 * windows of its rows at a time (activities/verify-batch/row-windows.ts), not all of them.
 */
export const DEFAULT_BATCH_SIZE = 1000;
