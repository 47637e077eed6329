/**
 * A requests-per-minute quota on `/verify` (`--rpm N`), as an LLM judge's API enforces one: a
 * token bucket (GCRA, the "generic cell rate algorithm": one token every 60/N s, at most `burst`
 * saved up) that refuses a request beyond it with 429 and a `Retry-After`.
 *
 * A refusal books the next free token for the refused row (its key, `task:rollout`) and its
 * `Retry-After` says when that token comes: requests refused together are told to come back one
 * token apart, and a row that comes back at or after its time gets in on the token it booked,
 * whatever else arrived meanwhile. A row that comes back early is refused again (its booking
 * kept). Every request let in, booked or not, takes one token: the quota is never exceeded, and a
 * client that honours `Retry-After` is never refused twice in a row. Pure: the clock is passed in,
 * so tests are exact.
 */
export type QuotaDecision = { ok: true } | { ok: false; retryAfterMs: number };

export class RequestQuota {
  /** Milliseconds between two tokens. */
  readonly intervalMs: number;
  /** How far ahead of the steady rate a request may come (burst − 1 tokens). */
  private readonly toleranceMs: number;
  /** The GCRA's theoretical arrival time: a request conforms at `tat - toleranceMs` or later. */
  private tat = -Infinity;
  /** Key -> the time of the token booked for it when it was refused. */
  private readonly booked = new Map<string, number>();

  /**
   * @param rpm requests per minute (> 0)
   * @param burst tokens that can be saved up (≥ 1); 0: one second's worth, at least 1
   */
  constructor(rpm: number, burst = 0) {
    if (!(rpm > 0)) throw new Error(`rpm must be > 0, got ${rpm}`);
    this.intervalMs = 60_000 / rpm;
    const tokens = burst >= 1 ? Math.floor(burst) : Math.max(1, Math.ceil(rpm / 60));
    this.toleranceMs = (tokens - 1) * this.intervalMs;
  }

  /** Lets the request of row `key` in at time `now` (ms), or books it the next token and says how long to wait for it. */
  take(now: number, key: string): QuotaDecision {
    const booking = this.booked.get(key);
    if (booking !== undefined) {
      if (now < booking) return { ok: false, retryAfterMs: Math.ceil(booking - now) };
      this.booked.delete(key);
      return { ok: true };
    }
    const conformsAt = this.tat - this.toleranceMs;
    this.tat = Math.max(this.tat, now) + this.intervalMs;
    if (now >= conformsAt) return { ok: true };
    this.booked.set(key, conformsAt);
    return { ok: false, retryAfterMs: Math.ceil(conformsAt - now) };
  }

  /** Rows refused and not back yet. */
  get bookings(): number {
    return this.booked.size;
  }
}

/** `Retry-After` in seconds with millisecond precision (RFC 9110 says whole seconds; clients that parse decimals wait exactly). */
export function retryAfterHeader(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}
