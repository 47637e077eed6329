/**
 * The four sequences of a live estimate (new mean, delta new − old, flips up and down) with units
 * weighted by their rows, so the estimand is the mean over the planned ROWS whatever the units'
 * sizes (task-values.ts): a unit's value is its sum times N/R (N units, R rows planned), in
 * [0, maxRows·N/R] (the delta in ±that). With tasks of equal size kept together this is the task
 * mean, as in live-estimate.ts. Method and sources: wor-cs.ts (Waudby-Smith & Ramdas 2020).
 */
import type { PairedUnit } from '../contract/batch-result.js';
import type { LiveEstimate } from './live-estimate.js';
import { addPending, createWorCs, narrowPending, resolvePending, type PendingToken, type WorCsState } from './wor-cs.js';

/** Read once per module: a global read is slow in the workflow sandbox (wor-cs.ts). */
const { max, min } = Math;

const KEYS = ['newMean', 'delta', 'up', 'down'] as const;

/** Four sequences for `units` units of `rows` rows in all, the largest of `maxRows`, at level 1 − alpha. */
export function createRowWeighted(units: number, rows: number, maxRows: number, alpha: number): LiveEstimate {
  const top = (maxRows * units) / rows;
  const seq = (lower: number) => createWorCs({ populationSize: units, lower, upper: top, alpha });
  return { newMean: seq(0), delta: seq(-top), up: seq(0), down: seq(0) };
}

/** N/R of a sequence (its range's top is maxRows·N/R). */
export const scaleOf = (est: LiveEstimate, maxRows: number) => est.newMean.upper / maxRows;

/** Each value's range for what is known of unit `u` (a point when all its rows are known). */
export function unitRanges(u: PairedUnit, scale: number): LiveEstimate<{ lo: number; hi: number }> {
  const unknown = u.rows - u.known;
  const range = (known: number) => ({ lo: known * scale, hi: (known + unknown) * scale });
  const n = range(u.newSum);
  const old = u.oldSum * scale;
  return { newMean: n, delta: { lo: n.lo - old, hi: n.hi - old }, up: range(u.up), down: range(u.down) };
}

/** A unit whose end is not known yet enters as pending over every value's whole range. */
export function addWhole(est: LiveEstimate): LiveEstimate<PendingToken> {
  return { newMean: addPending(est.newMean), delta: addPending(est.delta), up: addPending(est.up), down: addPending(est.down) };
}

/**
 * The unit's end is known: resolved when all its rows are known (null), else narrowed and left
 * pending (the tokens to settle it with later, when more of its rows are known: re-judgment).
 */
export function settleUnit(
  est: LiveEstimate,
  tokens: LiveEstimate<PendingToken>,
  u: PairedUnit,
  scale: number,
): LiveEstimate<PendingToken> | null {
  const r = unitRanges(u, scale);
  // Fields listed, not spread: the spread helper of the workflow bundle reads globals (wor-cs.ts).
  const next = { newMean: tokens.newMean, delta: tokens.delta, up: tokens.up, down: tokens.down };
  for (const k of KEYS) {
    const s: WorCsState = est[k];
    // Rounding may put a value a hair past the range's ends.
    const lo = min(s.upper, max(s.lower, r[k].lo));
    const hi = min(s.upper, max(s.lower, r[k].hi));
    if (u.known === u.rows) resolvePending(s, tokens[k], lo);
    else next[k] = narrowPending(s, tokens[k], lo, hi);
  }
  return u.known === u.rows ? null : next;
}
