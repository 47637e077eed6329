/** Retry budget of one `verifyWithRetries` call (Temporal retries the activity after that). */
export const DEFAULT_VERIFY_RETRY = { maxTries: 6, baseMs: 250, maxMs: 15_000 } as const;

/** A `Retry-After` longer than this is not waited for in full (default cap, see below). */
export const DEFAULT_RETRY_AFTER_CAP_MS = 120_000;

export interface BackoffOptions {
  /** Scale of the first retry's delay window. */
  baseMs: number;
  /** Upper bound of the exponential window. */
  maxMs: number;
  /** The server's `Retry-After`, in ms: honoured as a floor of the delay. */
  retryAfterMs?: number;
  /**
   * Cap applied to `retryAfterMs` so a server cannot park a worker for hours.
   * Default: max(maxMs, DEFAULT_RETRY_AFTER_CAP_MS).
   */
  retryAfterCapMs?: number;
}

/**
 * Delay before retry number `attempt` (1 = the wait after the first failed try).
 *
 * Exponential backoff with full jitter ("Exponential Backoff And Jitter", AWS architecture blog):
 * uniform in [0, min(maxMs, baseMs * 2^(attempt-1))). Full jitter spreads many workers that failed
 * together (a judge restart) instead of having them retry in lock-step.
 *
 * A `Retry-After` is a floor: the delay is at least min(retryAfterMs, cap), plus a small jitter
 * (up to min(baseMs, 10% of the floor)) so that clients told the same instant do not all return
 * exactly at once. Pure: `random` must return a number in [0, 1).
 */
export function backoffDelayMs(attempt: number, opts: BackoffOptions, random: () => number = Math.random): number {
  const baseMs = Math.max(0, opts.baseMs);
  const maxMs = Math.max(baseMs, opts.maxMs);
  const n = Math.max(1, Math.floor(attempt));
  // 2^(n-1) overflows to Infinity for huge n; min() keeps it finite.
  const window = Math.min(maxMs, baseMs * 2 ** Math.min(n - 1, 1024));
  const r = clamp01(random());
  let delay = Math.floor(r * window);
  if (opts.retryAfterMs !== undefined && Number.isFinite(opts.retryAfterMs) && opts.retryAfterMs > 0) {
    const cap = opts.retryAfterCapMs ?? Math.max(maxMs, DEFAULT_RETRY_AFTER_CAP_MS);
    const floor = Math.min(opts.retryAfterMs, cap);
    const spread = Math.min(baseMs, floor * 0.1);
    delay = Math.max(delay, Math.ceil(floor + r * spread));
  }
  return delay;
}

function clamp01(x: number): number {
  if (!Number.isFinite(x) || x < 0) return 0;
  return x >= 1 ? 1 - Number.EPSILON : x;
}
