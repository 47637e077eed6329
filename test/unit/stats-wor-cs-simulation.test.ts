/**
 * Simulated random-order runs over fixed, known finite populations of tasks (several rollouts
 * each, rewards in [0, 1], old and new scores paired with a planted change): the live interval must
 * cover the true population value at EVERY look in at least 1 − α of the runs, also when the run
 * stops at the first look whose interval excludes 0, and when judge failures (more frequent on
 * some values) stay pending for a while or for ever. A naive z-interval looked at after every task
 * fails the same check, which shows the check can fail. Seeded: the same numbers on every run.
 */
import { describe, expect, it } from 'vitest';
import { Mulberry32 } from '../../src/reference-server/prng.js';
import { rowWeightedRange, rowWeightedValue } from '../../src/stats/task-values.js';
import { addPending, addValue, createWorCs, interval, resolvePending, type PendingToken } from '../../src/stats/wor-cs.js';

const ALPHA = 0.05;
const RUNS = 2000;
/** Nominal rate plus three Monte-Carlo standard errors of a rate estimated from RUNS runs. */
const ALLOWED = ALPHA + 3 * Math.sqrt((ALPHA * (1 - ALPHA)) / RUNS);
const TASKS = 200;
const ROLLOUTS = 4;

interface Task {
  oldMean: number;
  newMean: number;
  delta: number;
}

/** Tasks of ROLLOUTS binary rollouts; in `plantedShare` of them failures turn into passes at `up`. */
function pairedPopulation(seed: number, plantedShare: number, up: number, down: number): Task[] {
  const r = new Mulberry32(seed);
  return Array.from({ length: TASKS }, () => {
    const difficulty = r.next() ** 2;
    const planted = r.next() < plantedShare;
    let [olds, news] = [0, 0];
    for (let i = 0; i < ROLLOUTS; i++) {
      const old = r.next() < difficulty ? 1 : 0;
      let now = old;
      if (planted && old === 0 && r.next() < up) now = 1;
      if (old === 1 && r.next() < down) now = 0;
      olds += old;
      news += now;
    }
    return { oldMean: olds / ROLLOUTS, newMean: news / ROLLOUTS, delta: (news - olds) / ROLLOUTS };
  });
}

/** A population whose true delta is exactly 0 though half its tasks change: each change has its mirror. */
function nullPopulation(seed: number): Task[] {
  const half = pairedPopulation(seed, 0.5, 0.5, 0.05).slice(0, TASKS / 2);
  return [...half, ...half.map((t) => ({ oldMean: t.newMean, newMean: t.oldMean, delta: -t.delta }))];
}

function permutation(n: number, r: Mulberry32): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(r.next() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

const meanOf = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

interface RunResult {
  /** Some look's interval missed the truth; the first look excluding 0 (0 if none) and whether it covered. */
  missed: boolean;
  stoppedAt: number;
  coveredAtStop: boolean;
}

/** Judge failures and in-flight tasks: which units enter pending, and when (if ever) their value comes. */
interface Delays {
  failure?: (v: number) => number;
  resolveAfter?: (v: number, r: Mulberry32) => number;
  neverResolved?: number;
}

/**
 * One run: values in a random order; a unit fails with probability `failure(value)` and then stays
 * pending for `resolveAfter` more units (or for ever, with probability `neverResolved`). Looks after
 * every unit and after every late resolution.
 */
function simulate(values: number[], range: [number, number], r: Mulberry32, opts: Delays = {}): RunResult {
  const truth = meanOf(values);
  const s = createWorCs({ populationSize: values.length, lower: range[0], upper: range[1], alpha: ALPHA });
  let waiting: { at: number; token: PendingToken; value: number }[] = [];
  const result: RunResult = { missed: false, stoppedAt: 0, coveredAtStop: true };
  const look = (t: number) => {
    const iv = interval(s);
    const covers = iv.lo <= truth + 1e-12 && truth <= iv.hi + 1e-12;
    if (!covers) result.missed = true;
    if (result.stoppedAt === 0 && (iv.lo > 0 || iv.hi < 0)) {
      result.stoppedAt = t;
      result.coveredAtStop = covers;
    }
  };
  const resolveUpTo = (t: number) => {
    if (!waiting.some((x) => x.at <= t)) return;
    const due = waiting.filter((x) => x.at <= t).sort((a, b) => a.at - b.at);
    waiting = waiting.filter((x) => x.at > t);
    for (const w of due) {
      resolvePending(s, w.token, w.value);
      look(t + 1);
    }
  };
  permutation(values.length, r).forEach((j, t) => {
    const v = values[j];
    if (opts.failure && r.next() < opts.failure(v)) {
      const token = addPending(s);
      const at = t + (opts.resolveAfter?.(v, r) ?? 0);
      if (r.next() >= (opts.neverResolved ?? 0)) waiting.push({ at, token, value: v });
    } else addValue(s, v);
    look(t + 1);
    resolveUpTo(t);
  });
  resolveUpTo(Number.POSITIVE_INFINITY);
  return result;
}

function runMany(values: number[], range: [number, number], seed: number, opts?: Delays) {
  const r = new Mulberry32(seed);
  const results = Array.from({ length: RUNS }, () => simulate(values, range, r, opts));
  const stops = results.filter((x) => x.stoppedAt > 0);
  return {
    missRate: results.filter((x) => x.missed).length / RUNS,
    stopRate: stops.length / RUNS,
    missAtStopRate: stops.filter((x) => !x.coveredAtStop).length / RUNS,
    medianStop: stops.map((x) => x.stoppedAt).sort((a, b) => a - b)[Math.floor(stops.length / 2)] ?? 0,
  };
}

describe('the live interval over simulated random-order runs (2000 runs per population)', () => {
  const planted = pairedPopulation(7, 0.3, 0.5, 0.02);
  const deltas = planted.map((t) => t.delta);

  it('covers the planted delta at every look, and stopping at the first look that excludes 0 keeps it', () => {
    expect(meanOf(deltas)).toBeGreaterThan(0.05);
    const out = runMany(deltas, [-1, 1], 101);
    expect(out.missRate).toBeLessThanOrEqual(ALLOWED);
    expect(out.missAtStopRate).toBeLessThanOrEqual(ALLOWED);
    // Not vacuous: the change is found, well before the last task.
    expect(out.stopRate).toBe(1);
    expect(out.medianStop).toBeLessThan(0.8 * TASKS);
  });

  it('with no change at all, stopping when the interval excludes 0 is wrong in at most α of the runs', () => {
    const nulls = nullPopulation(13).map((t) => t.delta);
    expect(meanOf(nulls)).toBe(0);
    expect(nulls.filter((d) => d !== 0).length).toBeGreaterThan(TASKS / 10);
    const out = runMany(nulls, [-1, 1], 202);
    expect(out.stopRate).toBeLessThanOrEqual(ALLOWED);
    expect(out.missRate).toBeLessThanOrEqual(ALLOWED);
  });

  it('covers the new mean and the old one (values in [0, 1]) at every look', () => {
    for (const [values, seed] of [
      [planted.map((t) => t.newMean), 303],
      [planted.map((t) => t.oldMean), 304],
    ] as const) {
      expect(runMany(values, [0, 1], seed).missRate).toBeLessThanOrEqual(ALLOWED);
    }
  });

  it('covers the delta when judge failures, more frequent on regressions, stay pending for a while or for ever', () => {
    const out = runMany(deltas, [-1, 1], 404, {
      failure: (v) => (v < 0 ? 0.5 : v > 0 ? 0.02 : 0.1),
      resolveAfter: () => 25,
      neverResolved: 0.2,
    });
    expect(out.missRate).toBeLessThanOrEqual(ALLOWED);
    expect(out.missAtStopRate).toBeLessThanOrEqual(ALLOWED);
  });

  it('covers the delta when every task enters pending at dispatch and its value comes back later, regressions slowest', () => {
    const out = runMany(deltas, [-1, 1], 606, {
      failure: () => 1,
      resolveAfter: (v, r) => 1 + Math.floor(r.next() * (v < 0 ? 40 : 10)),
    });
    expect(out.missRate).toBeLessThanOrEqual(ALLOWED);
    expect(out.missAtStopRate).toBeLessThanOrEqual(ALLOWED);
    expect(out.stopRate).toBe(1);
  });

  it('covers the mean over rows when tasks differ in size (1 to 8 rollouts), with row-weighted task values', () => {
    const r = new Mulberry32(77);
    const tasks = Array.from({ length: TASKS }, () => {
      const size = 1 + Math.floor(r.next() * 8);
      const p = r.next();
      return Array.from({ length: size }, (): number => (r.next() < p ? 1 : 0));
    });
    const rows = tasks.flat();
    const plan = { tasks: TASKS, rows: rows.length, minRows: 1, maxRows: 8 };
    const values = tasks.map((t) =>
      rowWeightedValue(
        t.reduce((a, b) => a + b, 0),
        plan,
      ),
    );
    expect(meanOf(values)).toBeCloseTo(meanOf(rows), 12);
    const range = rowWeightedRange(0, 1, plan);
    expect(runMany(values, [range.lo, range.hi], 707).missRate).toBeLessThanOrEqual(ALLOWED);
  });

  it('the check can fail: a naive z-interval looked at after every task misses far more often than α', () => {
    const truth = meanOf(deltas);
    const r = new Mulberry32(505);
    let missed = 0;
    for (let run = 0; run < RUNS; run++) {
      let [sum, squares, miss] = [0, 0, false];
      permutation(TASKS, r).forEach((j, t) => {
        const n = t + 1;
        sum += deltas[j];
        squares += deltas[j] ** 2;
        const mean = sum / n;
        const se = Math.sqrt(Math.max(0, squares / n - mean * mean) / n) * Math.sqrt((TASKS - n) / (TASKS - 1));
        if (n >= 10 && Math.abs(mean - truth) > 1.96 * se + 1e-12) miss = true;
      });
      if (miss) missed++;
    }
    expect(missed / RUNS).toBeGreaterThan(0.2);
  });
});
