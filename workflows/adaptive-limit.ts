/**
 * Adaptive concurrency, pure and deterministic (the workflow imports it). After each committed
 * batch the workflow feeds it the batch's overload signals; the limit it returns applies to the
 * whole run, across all workers, since the workflow owns the window of batches in flight.
 *
 * - The verifier throttled (429/503): down to the slots the batch kept busy. A judge with a quota
 *   takes `quota × latency` requests in flight; beyond that, slots wait out Retry-Afters. The batch
 *   reports its rows' time on the judge and their time held back, so `launchLimit × busy / (busy +
 *   held)` is the concurrency its quota takes (Little's law), measured at the limit the batch ran
 *   with (a batch launched before an earlier cut gives the same estimate), plus one step (below):
 *   a limit a little above the quota costs a few 429s, each row refused once at most (it is
 *   booked a token), while one below it leaves the quota unused. A batch without these sums
 *   (earlier versions, or a 503 without waits) halves the limit.
 * - Latency climbed well above the best seen: cut it by a quarter. Latency is judged over at least
 *   `MIN_LATENCY_ANSWERS` answers: a smaller batch's (a re-judgment of a few rows) are pooled with
 *   the next ones', since a few answers of a judge's heavy tail make a mean that is only noise (at
 *   concurrency 256 such batches cut the limit to 176–209 again and again: bench/README.md).
 * - Otherwise raise it: by an eighth of the ceiling, up to the ceiling (`--concurrency`); once the
 *   verifier has throttled, by 1/32 of the limit (at least 1), and only on a batch launched at the
 *   limit in force (one launched lower says nothing of it), so that it settles within a few % of
 *   the judge's quota instead of climbing past it on stale news.
 */
import type { BatchResult } from '../src/contract/batch-result.js';

export interface LimitState {
  /** The limit in force. */
  effective: number;
  /** Typical latency of a healthy verifier, in ms (null until the first answers). */
  baselineLatencyMs: number | null;
  /** The verifier has throttled this run (absent: not yet, or earlier versions). */
  throttledOnce?: boolean;
  /** Answers of batches too small to judge latency on, pooled until there are enough (absent: none). */
  pendingLatency?: { msSum: number; count: number };
}

/** What a batch's result tells the limit (its overload signals). */
export type BatchSignals = Pick<
  BatchResult,
  'throttled' | 'latencyMsSum' | 'latencyCount' | 'busyMsSum' | 'throttleWaitMsSum' | 'launchLimit'
>;

/** Latency counts as climbing above `2 × baseline + LATENCY_SLACK_MS`. */
export const LATENCY_SLACK_MS = 50;

/** Latency is judged over at least this many answers (of one batch or several). */
export const MIN_LATENCY_ANSWERS = 32;

/** Once throttled, the limit grows by this share of itself per healthy batch. */
export const SETTLED_STEP = 1 / 32;

export function adaptLimit(state: LimitState, ceiling: number, batch: BatchSignals): LimitState {
  const effective = Math.min(state.effective, ceiling);
  if (batch.throttled > 0) return { ...state, effective: throttledLimit(effective, batch), throttledOnce: true };
  if (batch.latencyCount === 0) return { ...state, effective };
  const msSum = (state.pendingLatency?.msSum ?? 0) + batch.latencyMsSum;
  const count = (state.pendingLatency?.count ?? 0) + batch.latencyCount;
  if (count < MIN_LATENCY_ANSWERS) return { ...state, effective, pendingLatency: { msSum, count } };
  const judged: LimitState = { ...state, pendingLatency: undefined };
  const latency = msSum / count;
  const baseline = state.baselineLatencyMs ?? latency;
  if (latency > 2 * baseline + LATENCY_SLACK_MS) {
    // Slow drift upwards, so that a judge that is just slower today is not punished forever.
    return { ...judged, effective: Math.max(1, Math.floor(effective * 0.75)), baselineLatencyMs: baseline * 0.9 + latency * 0.1 };
  }
  const stale = state.throttledOnce && batch.launchLimit !== undefined && batch.launchLimit < effective;
  const step = stale ? 0 : state.throttledOnce ? Math.max(1, Math.round(effective * SETTLED_STEP)) : Math.max(1, Math.round(ceiling / 8));
  return {
    ...judged,
    effective: Math.min(ceiling, effective + step),
    baselineLatencyMs: Math.min(baseline, latency) * 0.5 + baseline * 0.5,
  };
}

/** The limit after a throttled batch: the slots it kept busy at its launch limit, else half. */
function throttledLimit(effective: number, batch: BatchSignals): number {
  const busy = batch.busyMsSum ?? 0;
  const held = batch.throttleWaitMsSum ?? 0;
  if (batch.launchLimit === undefined || busy <= 0 || held <= 0) return Math.max(1, Math.floor(effective / 2));
  const estimate = (batch.launchLimit * busy) / (busy + held);
  return Math.max(1, Math.min(effective, Math.round(estimate + Math.max(1, estimate * SETTLED_STEP))));
}
