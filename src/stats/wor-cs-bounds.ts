/**
 * The bounds of the without-replacement confidence sequence of wor-cs.ts, from its running sums.
 * Method and source: see wor-cs.ts (Waudby-Smith & Ramdas, NeurIPS 2020, empirical-Bernstein CS).
 * Here, on [0, 1]: the CS bounds (A_t ∓ V_t ∓ log(2/α)) / B_t with every pending unit at its
 * worst end, the sure bounds (every unseen unit at 0 or at 1, every pending one at its worst end),
 * and the running intersection of both with the earlier intervals.
 */
import type { WorCsState } from './wor-cs.js';

/** Read once per module: a global read is slow in the workflow sandbox (wor-cs.ts). */
const { log, max, min } = Math;

/** An interval for the population mean, in the units of the values, and how far the sample got. */
export interface IntervalEstimate {
  lo: number;
  hi: number;
  /** The mean of the known values, clamped into [lo, hi]; the interval is what to trust. */
  estimate: number;
  /** Units fed so far (known and pending), pending ones among them, and the population size. */
  added: number;
  pending: number;
  of: number;
}

/** The interval at the current t alone (no running intersection), on [0, 1]. */
export function currentBounds(s: WorCsState): { lo: number; hi: number } {
  const n = s.populationSize;
  const sureLo = (s.sum + s.pendingLo) / n;
  const sureHi = (s.sum + s.pendingHi + (n - s.added)) / n;
  if (s.added === 0 || !(s.weight > 0)) return { lo: max(0, sureLo), hi: min(1, sureHi) };
  const margin = log(2 / s.alpha) + s.penalty + s.pendingPenalty;
  // A_t = P + H_t·S − Q, with each pending unit at the end that is worst for the bound.
  const low = s.betSum + s.pendingBetLo + s.harmonic * (s.sum + s.pendingLo) - (s.harmonicSum + s.pendingHarmonicLo);
  const high = s.betSum + s.pendingBetHi + s.harmonic * (s.sum + s.pendingHi) - (s.harmonicSum + s.pendingHarmonicHi);
  // Clamped into the sure interval, so lo ≤ hi even when rounding puts the CS just outside it.
  return { lo: clamp((low - margin) / s.weight, sureLo, sureHi), hi: clamp((high + margin) / s.weight, sureLo, sureHi) };
}

function clamp(x: number, lo: number, hi: number): number {
  return min(min(1, hi), max(max(0, lo), x));
}

/** Intersects the running interval with the current one (kept alone if they do not meet). */
export function refreshInterval(s: WorCsState): void {
  const now = currentBounds(s);
  const lo = max(s.lo, now.lo);
  const hi = min(s.hi, now.hi);
  if (lo <= hi) {
    s.lo = lo;
    s.hi = hi;
  } else {
    s.lo = now.lo;
    s.hi = now.hi;
  }
}
