/**
 * A confidence sequence (an interval valid at every look, however often one looks and whenever one
 * stops) for the mean of a FINITE population of N bounded values, sampled WITHOUT replacement.
 *
 * Method: the predictable-mixture empirical-Bernstein confidence sequence for sampling without
 * replacement of Waudby-Smith & Ramdas, "Confidence sequences for sampling without replacement"
 * (NeurIPS 2020, arXiv 2006.04347; their predictable-mixture EB CS), two-sided (α/2 per side),
 * with their plug-ins (μ̂ and σ̂² regularised by one fake observation at 1/2 and 1/4) and their bet
 * λ_t = min(1/2, √(2 log(2/α) / (σ̂²_{t−1} t log(1+t)))), as in the authors' `confseq` package.
 * On values y ∈ [0, 1] (x is mapped from [a, b]), with S_{t−1} the sum of the values before t:
 *
 *   E[y_t | past] = μ_t = (Nμ − S_{t−1}) / (N − t + 1)                       (the unseen mean)
 *   M_t = Π exp(λ_i (y_i − μ_i) − c(λ_i) (y_i − μ̂_{i−1})²),  c(λ) = −log(1−λ) − λ
 *
 * is a nonnegative supermartingale (Fan, Grama & Liu 2015, Lemma 4.1; Howard et al. 2021, the
 * empirical-Bernstein bound; checked numerically in test/unit/stats-wor-cs.test.ts),
 * so by Ville's inequality P(∃t: M_t ≥ 2/α) ≤ α/2. Solving M_t < 2/α for μ gives
 *
 *   μ ∈ [(A_t − V_t − log(2/α)) / B_t,  (A_t + V_t + log(2/α)) / B_t]
 *   A_t = Σ λ_i (y_i + S_{i−1}/(N−i+1)),  B_t = Σ λ_i N/(N−i+1),  V_t = Σ c(λ_i)(y_i − μ̂_{i−1})².
 *
 * A_t is kept in O(1) as P + H_t·S − Q with P = Σ λ_i y_i, H_t = Σ_{i≤t} λ_i/(N−i+1), Q = Σ H_i y_i.
 * The interval is also intersected with the sure bound (every unseen value at 0 or at 1) and with
 * the earlier intervals (the running intersection, valid because the CS holds at all t at once);
 * at t = N it is the exact mean. If the intersection is ever empty (possible only in the ≤ α event
 * of a miss) the current interval is kept.
 *
 * Values not yet known (a task in flight, or a judge failure not yet re-judged) enter at their
 * place in the order as a range [lo, hi] (`addPending`; `narrowPending` when some of its rows come
 * back, `resolvePending` with the value): the interval contains the union over every value in that
 * range (each linear term at its worst end, each quadratic term at its largest: A and V separate),
 * so it holds whatever the value turns out to be, and failures that depend on the value (a judge
 * that fails more on wrong answers) cannot bias it. A unit's bet and centre are fixed when it is
 * added, from the values known then (units resolved before it included): they stay predictable
 * as long as what is known when unit k enters depends only on the units before k.
 *
 * Assumptions: the values are fed in a uniformly random order of the N planned units (a seeded
 * permutation) — in THAT order, not in the order results arrive (feed each unit as pending when it
 * is dispatched, or hold early results back until the units before them are in) — every value lies
 * in [a, b], and N is the number of units planned. The estimand is the equal-weight mean of the N
 * per-unit values (see task-values.ts for the row-weighted one).
 * Why this one: O(1) running sums (the betting CS of the same authors is tighter but needs a grid
 * of candidate means), and its width follows the values' spread (a Hoeffding CS does not shrink
 * when most paired differences are 0). N and α are fixed when the sequence is created, not passed
 * to `interval`: the weights depend on N, and the bets and the running intersection on α.
 * State: plain JSON numbers, O(1) in N plus nothing per pending unit (the caller keeps its token);
 * no randomness and no clock, so it is safe in Temporal workflow state.
 */
import { refreshInterval, type IntervalEstimate } from './wor-cs-bounds.js';

export type { IntervalEstimate } from './wor-cs-bounds.js';

/**
 * Math's functions, read once per module. This code runs in the workflow, in Temporal's sandbox (a
 * `vm` context), where every read of a global (`Math`) goes through Node's context interceptor:
 * ~100 times slower than a module constant. Feeding a backlog of 31,000 units at one commit took
 * 2.4 s with `Math.min` (…) read per call, and an activation that runs past the worker's 5 s
 * isolate timeout aborts the worker process (bench/README.md, "async hook stack has become corrupted").
 */
const { log, log1p, max, min, sqrt } = Math;

/** The bets are capped here (the paper's choice): keeps c(λ) finite and the CS stable. */
export const BET_CAP = 0.5;

/** The running sums of one confidence sequence; values in the sums are on [0, 1]. */
export interface WorCsState {
  populationSize: number;
  lower: number;
  upper: number;
  alpha: number;
  /** Units fed so far (known and pending): t. */
  added: number;
  /** Plug-ins: count, sum and Σ(y − μ̂)² of the values known so far. */
  plugCount: number;
  plugSum: number;
  plugSquares: number;
  /** H_t = Σ λ_i/(N−i+1) and B_t = Σ λ_i N/(N−i+1). */
  harmonic: number;
  weight: number;
  /** Known values: count, S, P, Q, V. */
  known: number;
  sum: number;
  betSum: number;
  harmonicSum: number;
  penalty: number;
  /** Pending units: count, Σlo, Σhi, Σλ·lo, Σλ·hi, ΣH·lo, ΣH·hi and their largest penalties. */
  pending: number;
  pendingLo: number;
  pendingHi: number;
  pendingBetLo: number;
  pendingBetHi: number;
  pendingHarmonicLo: number;
  pendingHarmonicHi: number;
  pendingPenalty: number;
  /** The running intersection, on [0, 1]. */
  lo: number;
  hi: number;
}

/** What a pending unit contributed at its place; keep it to resolve the unit later. */
export interface PendingToken {
  bet: number;
  harmonic: number;
  cost: number;
  center: number;
  lo: number;
  hi: number;
  penalty: number;
}

/** A new sequence for the mean of `populationSize` values in [lower, upper], at level 1 − alpha. */
export function createWorCs(opts: { populationSize: number; lower: number; upper: number; alpha: number }): WorCsState {
  const { populationSize: n, lower, upper, alpha } = opts;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`confidence sequence: population size ${n} is not a positive integer`);
  if (!(upper > lower)) throw new RangeError(`confidence sequence: range [${lower}, ${upper}] is empty`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`confidence sequence: alpha ${alpha} is not in (0, 1)`);
  return {
    populationSize: n,
    lower,
    upper,
    alpha,
    added: 0,
    plugCount: 0,
    plugSum: 0,
    plugSquares: 0,
    harmonic: 0,
    weight: 0,
    known: 0,
    sum: 0,
    betSum: 0,
    harmonicSum: 0,
    penalty: 0,
    pending: 0,
    pendingLo: 0,
    pendingHi: 0,
    pendingBetLo: 0,
    pendingBetHi: 0,
    pendingHarmonicLo: 0,
    pendingHarmonicHi: 0,
    pendingPenalty: 0,
    lo: 0,
    hi: 1,
  };
}

/** `x` on [0, 1]; a value outside [lower, upper] by more than rounding is refused. */
function unit(s: WorCsState, x: number): number {
  const y = (x - s.lower) / (s.upper - s.lower);
  if (!(y >= -1e-9 && y <= 1 + 1e-9)) {
    throw new RangeError(`confidence sequence: value ${x} is outside [${s.lower}, ${s.upper}]; pass values within the bounds`);
  }
  return min(1, max(0, y));
}

/** The next place in the order: its bet (from the plug-ins so far) and its weights. */
function nextStep(s: WorCsState): Pick<PendingToken, 'bet' | 'harmonic' | 'cost' | 'center'> {
  if (s.added >= s.populationSize) {
    throw new RangeError(`confidence sequence: more than the ${s.populationSize} planned units were added`);
  }
  const t = s.added + 1;
  const center = (0.5 + s.plugSum) / (s.plugCount + 1);
  const variance = (0.25 + s.plugSquares) / (s.plugCount + 1);
  const bet = min(BET_CAP, sqrt((2 * log(2 / s.alpha)) / (variance * t * log(1 + t))));
  const remaining = s.populationSize - t + 1;
  s.harmonic += bet / remaining;
  s.weight += (bet * s.populationSize) / remaining;
  s.added = t;
  return { bet, harmonic: s.harmonic, cost: -log1p(-bet) - bet, center };
}

/** Adds known value `y` (on [0, 1]) with the weights of its place. */
function addKnown(s: WorCsState, step: Pick<PendingToken, 'bet' | 'harmonic' | 'cost' | 'center'>, y: number): void {
  s.known += 1;
  s.sum += y;
  s.betSum += step.bet * y;
  s.harmonicSum += step.harmonic * y;
  s.penalty += step.cost * (y - step.center) ** 2;
}

/** Feeds the next unit of the order, whose value `x` is known. Mutates and returns `s`. */
export function addValue(s: WorCsState, x: number): WorCsState {
  const y = unit(s, x);
  addKnown(s, nextStep(s), y);
  addToPlugIns(s, y);
  refreshInterval(s);
  return s;
}

/** The plug-ins (mean and variance estimates that set the next bets) take in value `y`. */
function addToPlugIns(s: WorCsState, y: number): void {
  s.plugCount += 1;
  s.plugSum += y;
  s.plugSquares += (y - (0.5 + s.plugSum) / (s.plugCount + 1)) ** 2;
}

/**
 * Feeds the next unit of the order whose value is not known yet but lies in [lo, hi] (within
 * [lower, upper]); the interval takes its worst case until `resolvePending` gives the value.
 */
export function addPending(s: WorCsState, lo: number = s.lower, hi: number = s.upper): PendingToken {
  const yLo = unit(s, lo);
  const yHi = unit(s, hi);
  if (yLo > yHi) throw new RangeError(`confidence sequence: pending range [${lo}, ${hi}] is empty`);
  const { bet, harmonic, cost, center } = nextStep(s);
  const penalty = cost * max((yLo - center) ** 2, (yHi - center) ** 2);
  const token: PendingToken = { bet, harmonic, cost, center, lo: yLo, hi: yHi, penalty };
  applyPending(s, token, 1);
  refreshInterval(s);
  return token;
}

/** Adds (sign 1) or removes (sign −1) a pending unit's worst-case terms. */
function applyPending(s: WorCsState, p: PendingToken, sign: 1 | -1): void {
  s.pending += sign;
  if (s.pending === 0) {
    // Exact zeros, not the rounding left by adding and taking away.
    s.pendingLo = s.pendingHi = s.pendingBetLo = s.pendingBetHi = 0;
    s.pendingHarmonicLo = s.pendingHarmonicHi = s.pendingPenalty = 0;
    return;
  }
  s.pendingLo += sign * p.lo;
  s.pendingHi += sign * p.hi;
  s.pendingBetLo += sign * p.bet * p.lo;
  s.pendingBetHi += sign * p.bet * p.hi;
  s.pendingHarmonicLo += sign * p.harmonic * p.lo;
  s.pendingHarmonicHi += sign * p.harmonic * p.hi;
  s.pendingPenalty += sign * p.penalty;
}

/**
 * Part of a pending unit's value is known (some of its rows came back, others are judge failures):
 * its range narrows to [lo, hi], within the range it had. Returns the token to use from now on
 * (the old one is spent).
 */
export function narrowPending(s: WorCsState, token: PendingToken, lo: number, hi: number): PendingToken {
  if (s.pending < 1) throw new RangeError('confidence sequence: no pending unit to narrow');
  const yLo = unit(s, lo);
  const yHi = unit(s, hi);
  if (yLo > yHi || yLo < token.lo - 1e-9 || yHi > token.hi + 1e-9) {
    throw new RangeError(`confidence sequence: range [${lo}, ${hi}] is not within the pending unit's range`);
  }
  const { bet, harmonic, cost, center } = token;
  const nLo = max(yLo, token.lo);
  const nHi = min(yHi, token.hi);
  const penalty = cost * max((nLo - center) ** 2, (nHi - center) ** 2);
  // Fields listed, not spread: a spread copy is ten times slower here (measured).
  const next: PendingToken = { bet, harmonic, cost, center, lo: nLo, hi: nHi, penalty };
  applyPending(s, token, -1);
  applyPending(s, next, 1);
  refreshInterval(s);
  return next;
}

/** The value of a pending unit is known: it replaces the unit's worst case. Resolve a token once. */
export function resolvePending(s: WorCsState, token: PendingToken, x: number): WorCsState {
  if (s.pending < 1) throw new RangeError('confidence sequence: no pending unit to resolve');
  const y = unit(s, x);
  if (y < token.lo - 1e-9 || y > token.hi + 1e-9) {
    throw new RangeError(`confidence sequence: value ${x} is outside the range the pending unit was added with`);
  }
  applyPending(s, token, -1);
  addKnown(s, token, y);
  addToPlugIns(s, y);
  refreshInterval(s);
  return s;
}

/** The interval now (in the units of the values) and the mean of the known values, clamped into it. */
export function interval(s: WorCsState): IntervalEstimate {
  const scale = s.upper - s.lower;
  const lo = s.lower + scale * s.lo;
  const hi = s.lower + scale * s.hi;
  const raw = s.known > 0 ? s.lower + (scale * s.sum) / s.known : (lo + hi) / 2;
  return { lo, hi, estimate: min(hi, max(lo, raw)), added: s.added, pending: s.pending, of: s.populationSize };
}
