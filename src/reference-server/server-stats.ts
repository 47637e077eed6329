/** What happened to a valid `/verify` request. */
export type VerifyOutcome = 'success' | 'judge_failed' | 'error' | 'reset' | 'hang';

/** Counters of the reference server, as served on `GET /stats`. */
export interface ServerStats {
  /** Requests received per route (`/verify` counts 422s too). */
  requests: { verify: number; aggregate_metrics: number; reverify_mode: number };
  /** `/verify` requests received and not yet answered or abandoned. */
  verify_in_flight: number;
  /** Highest `verify_in_flight` since start or the last reset. */
  peak_verify_in_flight: number;
  /**
   * When the first `/verify` since start or the last reset arrived, and when the last one was
   * answered (or abandoned): epoch milliseconds, fractional (null: none yet). A client's run is
   * timed by these, not by when it exits.
   */
  verify_first_at_ms: number | null;
  verify_last_answered_at_ms: number | null;
  /** Outcomes drawn for valid `/verify` requests. */
  verify_outcomes: Record<VerifyOutcome, number>;
  /** Valid `/verify` requests for a key (`_ng_task_index`, `_ng_rollout_index`) already seen: work done twice. */
  verify_repeats: number;
  /** `/verify` requests refused with 429 by the quota (`--rpm`); not counted in the outcomes or repeats. */
  verify_throttled: number;
  /** Of those: refusals of a key whose previous request was refused too (a client that came back too early). */
  verify_refused_again: number;
  /** The longest run of consecutive 429s of one key. */
  longest_refusal_streak: number;
  /**
   * From a key's judge-failure answer to its next `/verify` request, by the failure's ordinal for
   * that key (`"1"`: after its first judge failure, `"2"`: after its second …): how soon a client
   * re-judged (the client's delay for that round, plus what held the failure back).
   */
  rejudge_gaps: Record<string, GapSummary>;
}

/** Milliseconds of a set of gaps: how many, and their median, 90th percentile and largest (nearest rank). */
export interface GapSummary {
  count: number;
  p50_ms: number;
  p90_ms: number;
  max_ms: number;
}

/** Mutable counters behind `ServerStats`. */
export class StatsRecorder {
  private current = StatsRecorder.empty(0);
  private readonly seenKeys = new Set<string>();
  /** Keys whose last request was refused by the quota -> consecutive refusals. */
  private readonly refused = new Map<string, number>();
  /** Keys whose last answer was a judge failure -> when it was answered (ms). */
  private readonly failedAt = new Map<string, number>();
  /** Keys -> their judge failures so far. */
  private readonly failures = new Map<string, number>();
  /** Gaps (ms) from a judge failure to its key's next request, by the failure's ordinal. */
  private gaps = new Map<number, number[]>();

  private static empty(inFlight: number): ServerStats {
    return {
      requests: { verify: 0, aggregate_metrics: 0, reverify_mode: 0 },
      verify_in_flight: inFlight,
      peak_verify_in_flight: inFlight,
      verify_first_at_ms: null,
      verify_last_answered_at_ms: null,
      verify_outcomes: { success: 0, judge_failed: 0, error: 0, reset: 0, hang: 0 },
      verify_repeats: 0,
      verify_throttled: 0,
      verify_refused_again: 0,
      longest_refusal_streak: 0,
      rejudge_gaps: {},
    };
  }

  /** Counts a request to `route`. */
  request(route: keyof ServerStats['requests']): void {
    this.current.requests[route]++;
  }

  /** Marks a `/verify` request as in flight; returns the function that ends it (call once). */
  verifyStarted(): () => void {
    const stats = this.current;
    stats.verify_in_flight++;
    stats.peak_verify_in_flight = Math.max(stats.peak_verify_in_flight, stats.verify_in_flight);
    stats.verify_first_at_ms ??= epochMs();
    return () => {
      this.current.verify_in_flight--;
      this.current.verify_last_answered_at_ms = epochMs();
    };
  }

  /** Notes the key of a valid `/verify` request, counting a repeat if it was seen before (and the gap since its judge failure, if it had one). */
  verifyKey(key: string, now = performance.now()): void {
    if (this.seenKeys.has(key)) this.current.verify_repeats++;
    else this.seenKeys.add(key);
    const failedAt = this.failedAt.get(key);
    if (failedAt === undefined) return;
    this.failedAt.delete(key);
    const ordinal = this.failures.get(key)!;
    const gaps = this.gaps.get(ordinal) ?? [];
    gaps.push(now - failedAt);
    this.gaps.set(ordinal, gaps);
  }

  /** A judge failure of `key` was answered now. */
  judgeFailed(key: string, now = performance.now()): void {
    this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
    this.failedAt.set(key, now);
  }

  /** Counts a 429 of the quota for `key`, and its run of consecutive refusals. */
  throttled(key: string): void {
    const streak = (this.refused.get(key) ?? 0) + 1;
    this.refused.set(key, streak);
    this.current.verify_throttled++;
    if (streak > 1) this.current.verify_refused_again++;
    this.current.longest_refusal_streak = Math.max(this.current.longest_refusal_streak, streak);
  }

  /** `key` got past the quota: its run of refusals ends. */
  admitted(key: string): void {
    this.refused.delete(key);
  }

  /** Counts a drawn `/verify` outcome. */
  outcome(outcome: VerifyOutcome): void {
    this.current.verify_outcomes[outcome]++;
  }

  /** A copy of the counters. */
  snapshot(): ServerStats {
    const copy = structuredClone(this.current);
    for (const [ordinal, gaps] of [...this.gaps].sort(([a], [b]) => a - b)) copy.rejudge_gaps[String(ordinal)] = summarize(gaps);
    return copy;
  }

  /** Zeroes the counters; requests still in flight stay counted as in flight. */
  reset(): void {
    this.current = StatsRecorder.empty(this.current.verify_in_flight);
    this.seenKeys.clear();
    this.refused.clear();
    this.failedAt.clear();
    this.failures.clear();
    this.gaps = new Map();
  }
}

/** Now, in epoch milliseconds with the monotonic clock's precision. */
function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Nearest-rank percentiles of `gaps` (not empty), rounded to the millisecond. */
function summarize(gaps: readonly number[]): GapSummary {
  const sorted = [...gaps].sort((a, b) => a - b);
  const rank = (q: number) => Math.round(sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]);
  return { count: sorted.length, p50_ms: rank(0.5), p90_ms: rank(0.9), max_ms: Math.round(sorted[sorted.length - 1]) };
}
