import { describe, expect, it } from 'vitest';
import { Mulberry32 } from '../../src/reference-server/prng.js';
import {
  addPending,
  addValue,
  BET_CAP,
  createWorCs,
  interval,
  narrowPending,
  resolvePending,
  type WorCsState,
} from '../../src/stats/wor-cs.js';
import { currentBounds } from '../../src/stats/wor-cs-bounds.js';

const seeded = (seed: number, n: number): number[] => {
  const r = new Mulberry32(seed);
  return Array.from({ length: n }, () => r.next());
};

/**
 * The paper's interval at t, computed from its definition in O(t²) (not from running sums): the
 * bets from confseq's plug-ins (one fake observation at 1/2 and 1/4), A_t, B_t and V_t summed term
 * by term. Values on [0, 1].
 */
function referenceBounds(ys: number[], bigN: number, alpha: number): { lo: number; hi: number } {
  let lowSum = 0;
  let weight = 0;
  let penalty = 0;
  for (let i = 1; i <= ys.length; i++) {
    const before = ys.slice(0, i - 1);
    const muHat = (0.5 + before.reduce((a, b) => a + b, 0)) / i;
    let squares = 0;
    before.forEach((y, k) => {
      const muK = (0.5 + before.slice(0, k + 1).reduce((a, b) => a + b, 0)) / (k + 2);
      squares += (y - muK) ** 2;
    });
    const sigma2 = (0.25 + squares) / i;
    const bet = Math.min(0.5, Math.sqrt((2 * Math.log(2 / alpha)) / (sigma2 * i * Math.log(1 + i))));
    const sBefore = before.reduce((a, b) => a + b, 0);
    lowSum += bet * (ys[i - 1] + sBefore / (bigN - i + 1));
    weight += bet * (1 + (i - 1) / (bigN - i + 1));
    penalty += (-Math.log(1 - bet) - bet) * (ys[i - 1] - muHat) ** 2;
  }
  const margin = Math.log(2 / alpha) + penalty;
  return { lo: (lowSum - margin) / weight, hi: (lowSum + margin) / weight };
}

const clone = (s: WorCsState): WorCsState => JSON.parse(JSON.stringify(s)) as WorCsState;

describe('without-replacement confidence sequence (empirical Bernstein, Waudby-Smith & Ramdas 2020)', () => {
  it('the supermartingale step holds: E exp(λ(X−m) − c(λ)(X−μ̂)²) ≤ 1 for every X on [0,1] with mean m (two-point laws are extremal)', () => {
    let worst = 0;
    const grid = 24;
    for (let li = 1; li <= 10; li++) {
      const lam = (li / 10) * BET_CAP;
      const c = -Math.log(1 - lam) - lam;
      for (let hi = 0; hi <= grid; hi++) {
        const muHat = hi / grid;
        for (let i = 0; i <= grid; i++) {
          for (let j = i; j <= grid; j++) {
            const [x1, x2] = [i / grid, j / grid];
            for (let k = 0; k <= 8; k++) {
              const m = x1 + ((x2 - x1) * k) / 8;
              const p = x2 === x1 ? 1 : (x2 - m) / (x2 - x1);
              for (const sign of [1, -1]) {
                const f = (x: number) => Math.exp(sign * lam * (x - m) - c * (x - muHat) ** 2);
                worst = Math.max(worst, p * f(x1) + (1 - p) * f(x2));
              }
            }
          }
        }
      }
    }
    expect(worst).toBeLessThanOrEqual(1 + 1e-12);
  });

  it('its running sums give exactly the interval of the formula, at every t', () => {
    const bigN = 60;
    const ys = seeded(5, 40).map((u) => (u < 0.7 ? 0 : u < 0.9 ? 0.5 : 1));
    const s = createWorCs({ populationSize: bigN, lower: 0, upper: 1, alpha: 0.1 });
    ys.forEach((y, t) => {
      addValue(s, y);
      const ref = referenceBounds(ys.slice(0, t + 1), bigN, 0.1);
      const sure = { lo: s.sum / bigN, hi: (s.sum + bigN - (t + 1)) / bigN };
      const now = currentBounds(s);
      expect(now.lo).toBeCloseTo(Math.min(sure.hi, Math.max(0, sure.lo, ref.lo)), 12);
      expect(now.hi).toBeCloseTo(Math.max(sure.lo, Math.min(1, sure.hi, ref.hi)), 12);
    });
  });

  it('maps values from [a, b]: the interval of values on [−1, 1] is the [0, 1] one rescaled', () => {
    const xs = seeded(9, 30).map((u) => Math.round(u * 8) / 4 - 1);
    const wide = createWorCs({ populationSize: 50, lower: -1, upper: 1, alpha: 0.05 });
    const unit = createWorCs({ populationSize: 50, lower: 0, upper: 1, alpha: 0.05 });
    for (const x of xs) {
      addValue(wide, x);
      addValue(unit, (x + 1) / 2);
    }
    const [w, u] = [interval(wide), interval(unit)];
    expect(w.lo).toBeCloseTo(2 * u.lo - 1, 12);
    expect(w.hi).toBeCloseTo(2 * u.hi - 1, 12);
    expect(w.estimate).toBeCloseTo(xs.reduce((a, b) => a + b, 0) / xs.length, 12);
  });

  it('starts at [a, b], only narrows, and is the exact mean once all N are in', () => {
    const xs = seeded(2, 25);
    const s = createWorCs({ populationSize: 25, lower: 0, upper: 1, alpha: 0.05 });
    expect(interval(s)).toMatchObject({ lo: 0, hi: 1, added: 0, of: 25 });
    let prev = interval(s);
    for (const x of xs) {
      addValue(s, x);
      const now = interval(s);
      expect(now.lo).toBeGreaterThanOrEqual(prev.lo);
      expect(now.hi).toBeLessThanOrEqual(prev.hi);
      prev = now;
    }
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(prev.lo).toBeCloseTo(mean, 12);
    expect(prev.hi).toBeCloseTo(mean, 12);
  });

  it('a smaller alpha gives a wider interval', () => {
    const xs = seeded(4, 200).map((u) => (u < 0.3 ? 1 : 0));
    const [loose, strict] = [0.2, 0.01].map((alpha) => {
      const s = createWorCs({ populationSize: 1000, lower: 0, upper: 1, alpha });
      xs.forEach((x) => addValue(s, x));
      const iv = interval(s);
      return iv.hi - iv.lo;
    });
    expect(strict).toBeGreaterThan(loose);
  });

  it('is plain JSON: a state saved and restored mid-way (continue-as-new) gives the same intervals as one never saved', () => {
    const xs = seeded(8, 80).map((u) => u * 2 - 1);
    const whole = createWorCs({ populationSize: 100, lower: -1, upper: 1, alpha: 0.05 });
    let split = createWorCs({ populationSize: 100, lower: -1, upper: 1, alpha: 0.05 });
    xs.forEach((x, i) => {
      addValue(whole, x);
      if (i === 40) split = clone(split);
      addValue(split, x);
    });
    expect(split).toEqual(whole);
    expect(Object.values(whole).every((v) => typeof v === 'number' && Number.isFinite(v))).toBe(true);
  });

  it('a pending unit holds for every value it may take, and resolving it narrows to that value', () => {
    const xs = seeded(12, 60).map((u) => (u < 0.5 ? 1 : 0));
    const s = createWorCs({ populationSize: 80, lower: 0, upper: 1, alpha: 0.05 });
    xs.slice(0, 30).forEach((x) => addValue(s, x));
    const token = addPending(s, 0, 1);
    xs.slice(30).forEach((x) => addValue(s, x));
    const worst = currentBounds(s);
    for (const fill of [0, 0.25, 0.5, 0.75, 1]) {
      const filled = resolvePending(clone(s), token, fill);
      const now = currentBounds(filled);
      expect(worst.lo).toBeLessThanOrEqual(now.lo + 1e-12);
      expect(worst.hi).toBeGreaterThanOrEqual(now.hi - 1e-12);
      expect(filled.pending).toBe(0);
    }
    expect(interval(s)).toMatchObject({ pending: 1, added: 61 });
  });

  it('a pending unit narrowed (some of its rows back) lies between its first range and its value', () => {
    const xs = seeded(14, 50).map((u) => (u < 0.4 ? 1 : 0));
    const s = createWorCs({ populationSize: 70, lower: 0, upper: 1, alpha: 0.05 });
    xs.slice(0, 20).forEach((x) => addValue(s, x));
    const token = addPending(s);
    xs.slice(20).forEach((x) => addValue(s, x));
    const wide = currentBounds(s);
    const narrowed = clone(s);
    const next = narrowPending(narrowed, token, 0.5, 1);
    const mid = currentBounds(narrowed);
    expect(mid.lo).toBeGreaterThanOrEqual(wide.lo);
    expect(mid.hi).toBeLessThanOrEqual(wide.hi);
    for (const fill of [0.5, 0.75, 1]) {
      const now = currentBounds(resolvePending(clone(narrowed), next, fill));
      expect(mid.lo).toBeLessThanOrEqual(now.lo + 1e-12);
      expect(mid.hi).toBeGreaterThanOrEqual(now.hi - 1e-12);
    }
    expect(() => narrowPending(clone(narrowed), next, 0, 1)).toThrow(/not within the pending unit's range/);
    expect(() => resolvePending(clone(narrowed), next, 0.25)).toThrow(/outside the range/);
  });

  it('a pending unit never resolved leaves the sure range at the end: its whole range, not dropped', () => {
    const s = createWorCs({ populationSize: 4, lower: 0, upper: 1, alpha: 0.05 });
    addValue(s, 1);
    addPending(s, 0.25, 0.75);
    addValue(s, 0);
    addValue(s, 1);
    const iv = interval(s);
    expect(iv.lo).toBeCloseTo((2 + 0.25) / 4, 12);
    expect(iv.hi).toBeCloseTo((2 + 0.75) / 4, 12);
  });

  it('refuses values outside the bounds, more units than planned, and a resolution with nothing pending', () => {
    const s = createWorCs({ populationSize: 1, lower: 0, upper: 1, alpha: 0.05 });
    expect(() => addValue(s, 1.5)).toThrow(/outside \[0, 1\]/);
    addValue(s, 1);
    expect(() => addValue(s, 1)).toThrow(/more than the 1 planned/);
    const token = { bet: 0.1, harmonic: 0.1, cost: 0, center: 0.5, lo: 0, hi: 1, penalty: 0 };
    expect(() => resolvePending(s, token, 1)).toThrow(/no pending unit/);
    expect(() => createWorCs({ populationSize: 0, lower: 0, upper: 1, alpha: 0.05 })).toThrow(/population size/);
    expect(() => createWorCs({ populationSize: 3, lower: 0, upper: 1, alpha: 1 })).toThrow(/alpha/);
  });
});
