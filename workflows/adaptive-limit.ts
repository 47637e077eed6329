/**
 * Adaptive concurrency (AIMD), pure and deterministic (the workflow imports it). After each
 * committed batch the workflow feeds it the batch's overload signals; the limit it returns applies
 * to the whole run, across all workers, since the workflow owns the window of batches in flight.
 *
 * - The verifier throttled (429/503): halve the limit.
 * - Latency climbed well above the best seen: cut it by a quarter.
 * - Otherwise: raise it by an eighth of the ceiling, up to the ceiling (`--concurrency`).
 */
export interface LimitState {
  /** The limit in force. */
  effective: number;
  /** Typical latency of a healthy verifier, in ms (null until the first answers). */
  baselineLatencyMs: number | null;
}

export interface BatchSignals {
  throttled: number;
  latencyMsSum: number;
  latencyCount: number;
}

/** Latency counts as climbing above `2 × baseline + LATENCY_SLACK_MS`. */
export const LATENCY_SLACK_MS = 50;

export function adaptLimit(state: LimitState, ceiling: number, batch: BatchSignals): LimitState {
  const effective = Math.min(state.effective, ceiling);
  if (batch.throttled > 0) return { ...state, effective: Math.max(1, Math.floor(effective / 2)) };
  if (batch.latencyCount === 0) return { ...state, effective };
  const latency = batch.latencyMsSum / batch.latencyCount;
  const baseline = state.baselineLatencyMs ?? latency;
  if (latency > 2 * baseline + LATENCY_SLACK_MS) {
    // Slow drift upwards, so that a judge that is just slower today is not punished forever.
    return { effective: Math.max(1, Math.floor(effective * 0.75)), baselineLatencyMs: baseline * 0.9 + latency * 0.1 };
  }
  return {
    effective: Math.min(ceiling, effective + Math.max(1, Math.round(ceiling / 8))),
    baselineLatencyMs: Math.min(baseline, latency) * 0.5 + baseline * 0.5,
  };
}
