/**
 * The live paired estimate as the progress query answers it (src/stats/run-estimate.ts computes it;
 * docs/statistics.md says what it means). Types only: the workflow bundle imports this file.
 */

/** One interval as shown: the estimate and its bounds. */
export interface ShownInterval {
  estimate: number;
  lo: number;
  hi: number;
}

/** One agent's (or all agents') estimate as the views show it (`reverify status --json`: `estimate`). */
export interface EstimateView {
  /** Units: tasks entered (pending ones among them) of those planned. */
  tasks: { seen: number; pending: number; planned: number };
  /** The old mean is exact (every old reward is known): lo = hi. */
  oldMean?: ShownInterval;
  newMean?: ShownInterval;
  delta?: ShownInterval;
  flipsUp?: ShownInterval;
  flipsDown?: ShownInterval;
  /** Why there is no estimate (then the numbers are absent). */
  off?: string;
}

export interface RunEstimateView {
  confidence: number;
  /**
   * The plan is in file order (`--order file`, the default): the intervals assume tasks in a random
   * order and are not guaranteed here (docs/statistics.md, "Assumptions"), so the views say so.
   */
  fileOrder?: boolean;
  perAgent: Record<string, EstimateView>;
  all: EstimateView;
}
