/** Defaults of `reverify run`'s options (values held in ms where the flag takes seconds). */

/** Default of `--concurrency` (NeMo Gym: unbounded). */
export const DEFAULT_CONCURRENCY = 32;
/** Default of `--request-timeout` (held in ms): 10 minutes. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;
/** Default delay before the first re-judgment round: a minute (doubling per round). */
export const DEFAULT_REJUDGE_DELAY_MS = 60_000;
/** Default of `--batch-size`. */
export const DEFAULT_BATCH_SIZE = 500;
