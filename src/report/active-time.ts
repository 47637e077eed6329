/**
 * The time a run was verifying: the union of its batches' running intervals. A run stopped with
 * Ctrl-C for an hour, or resumed a day later, was not verifying meanwhile; its throughput and its
 * chart count only the time a batch was running (each invocation's own active time).
 */

/** Intervals `[start, end]` (ms) merged where they overlap or touch, in order. */
export function mergeIntervals(intervals: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const sorted = [...intervals].filter(([s, e]) => e >= s).sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [s, e] of sorted) {
    const last = merged[merged.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  return merged;
}

/** Active seconds of the intervals (their union). */
export function activeSeconds(intervals: ReadonlyArray<readonly [number, number]>): number {
  return mergeIntervals(intervals).reduce((sum, [s, e]) => sum + (e - s) / 1000, 0);
}

/** A clock that runs only while a batch runs: wall time (ms) to active seconds since the first start. */
export class ActiveClock {
  private readonly merged: Array<[number, number]>;
  readonly seconds: number;

  constructor(intervals: ReadonlyArray<readonly [number, number]>) {
    this.merged = mergeIntervals(intervals);
    this.seconds = this.merged.reduce((sum, [s, e]) => sum + (e - s) / 1000, 0);
  }

  /** Active seconds before `ms`. */
  at(ms: number): number {
    let sum = 0;
    for (const [s, e] of this.merged) {
      if (ms <= s) break;
      sum += (Math.min(ms, e) - s) / 1000;
    }
    return sum;
  }
}
