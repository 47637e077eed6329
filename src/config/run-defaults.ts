/** Defaults of `reverify run`'s options (values held in ms where the flag takes seconds). */

/** Default of `--concurrency` (NeMo Gym: unbounded). */
export const DEFAULT_CONCURRENCY = 32;
/** Default of `--request-timeout` (held in ms): 10 minutes. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;
/**
 * Default delay before the first re-judgment round (`--rejudge-delay`): 3 s, so that a few judge
 * failures are re-judged seconds after their round; it doubles every round, up to
 * `REJUDGE_DELAY_CEILING_MS`, so that rounds back off while a judge is down.
 */
export const DEFAULT_REJUDGE_DELAY_MS = 3_000;
/** The longest wait between re-judgment rounds (unless `--rejudge-delay` asks for a longer first one): 5 minutes. */
export const REJUDGE_DELAY_CEILING_MS = 300_000;

/**
 * How long judge failures wait for others to join their re-judgment plan after their batch was
 * committed, while the first pass still launches batches: their round's delay. A plan takes every
 * failure of its round whose delay has passed, so a fast run plans many batches' failures at a time,
 * not one plan, batch and commit per batch (each ≈ 18 events of history, so more continue-as-new);
 * the window is full of the first pass's batches meanwhile. Once nothing is left to launch every
 * failure is planned at once, due at its delay: the run's end does not wait for it.
 */
export function rejudgeGatherMs(delayMs: number): number {
  return delayMs;
}
/** The wait before re-judgment round `round + 2` (after round `round + 1`, 0-based `round`). */
export function rejudgeDelayMs(firstMs: number, round: number): number {
  return Math.min(firstMs * 2 ** round, Math.max(firstMs, REJUDGE_DELAY_CEILING_MS));
}
/**
 * Default of `--batch-size`. Each batch costs a fixed time in which its `/verify` slots idle (its
 * first rows read and part files opened before its first request; its parts published, its
 * completion reported and the next batch launched after its last): ≈ 100 ms at 20 ms latency on
 * 2 cores, an eighth of a 500-row batch, a sixteenth of a 1,000-row one. A batch holds two
 * windows of its rows at a time (activities/verify-batch/row-windows.ts), not all of them.
 */
export const DEFAULT_BATCH_SIZE = 1000;

/** `--order`: the plan's order (docs/usage.md "Order" says why the default is what it is). */
export const PLAN_ORDERS = ['random', 'file'] as const;
export const DEFAULT_PLAN_ORDER: (typeof PLAN_ORDERS)[number] = 'file';

/** `--confidence`: the level of the live estimate's intervals (docs/statistics.md). */
export const DEFAULT_CONFIDENCE = 0.95;
