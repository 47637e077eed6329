import { describe, expect, it } from 'vitest';
import { mulberry32, Mulberry32 } from '../../src/reference-server/prng.js';
import { bootstrapMeanInterval, cohensKappa, histogram, mean, quantile } from '../../src/report/stats.js';

describe("Cohen's κ on pass/fail", () => {
  it('matches the hand-computed textbook example', () => {
    // n = 50: po = (20 + 15) / 50 = 0.7; old pass 25/50, new pass 30/50; pe = 0.5·0.6 + 0.5·0.4 = 0.5.
    expect(cohensKappa({ pp: 20, pf: 5, fp: 10, ff: 15 })).toBeCloseTo((0.7 - 0.5) / (1 - 0.5), 12);
  });
  it('is 1 for perfect agreement and -1 for perfect disagreement with balanced margins', () => {
    expect(cohensKappa({ pp: 3, pf: 0, fp: 0, ff: 7 })).toBe(1);
    expect(cohensKappa({ pp: 0, pf: 5, fp: 5, ff: 0 })).toBe(-1);
  });
  it('is 0 when agreement is what chance gives', () => {
    // Old passes half, new passes half, independently: po = 0.5 = pe.
    expect(cohensKappa({ pp: 25, pf: 25, fp: 25, ff: 25 })).toBe(0);
  });
  it('is undefined (null) with no pairs, or one verdict for every pair', () => {
    expect(cohensKappa({ pp: 0, pf: 0, fp: 0, ff: 0 })).toBeNull();
    expect(cohensKappa({ pp: 9, pf: 0, fp: 0, ff: 0 })).toBeNull();
  });
});

describe('bootstrap interval of a mean', () => {
  it('is the value itself for constant data', () => {
    expect(bootstrapMeanInterval([2, 2, 2])).toEqual({ low: 2, high: 2 });
    expect(bootstrapMeanInterval([0.25])).toEqual({ low: 0.25, high: 0.25 });
  });
  it('is null for no data', () => {
    expect(bootstrapMeanInterval([])).toBeNull();
  });
  it('is reproducible: the same seed gives the same interval, another seed another', () => {
    const xs = Array.from({ length: 40 }, (_, i) => (i * 7) % 5);
    expect(bootstrapMeanInterval(xs)).toEqual(bootstrapMeanInterval(xs));
    expect(bootstrapMeanInterval(xs, { seed: 1 })).not.toEqual(bootstrapMeanInterval(xs, { seed: 2 }));
  });
  it('matches the normal approximation for 0..99 (mean 49.5, standard error 28.87/√100)', () => {
    // Population sd of 0..99 is √((100² − 1) / 12) = 28.866; ±1.96 se = ±5.66 around 49.5.
    const ci = bootstrapMeanInterval(
      Array.from({ length: 100 }, (_, i) => i),
      { resamples: 4000 },
    )!;
    expect(ci.low).toBeGreaterThan(49.5 - 5.66 - 0.8);
    expect(ci.low).toBeLessThan(49.5 - 5.66 + 0.8);
    expect(ci.high).toBeGreaterThan(49.5 + 5.66 - 0.8);
    expect(ci.high).toBeLessThan(49.5 + 5.66 + 0.8);
  });
  it('spans the possible means of [0, 1]: 0 and 1 each have probability 1/4', () => {
    // Means of two draws are 0, 0.5 or 1 with probability 1/4, 1/2, 1/4: the 2.5 % and 97.5 % points are 0 and 1.
    expect(bootstrapMeanInterval([0, 1])).toEqual({ low: 0, high: 1 });
  });
});

describe('helpers', () => {
  it('quantile interpolates between order statistics', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0)).toBe(1);
    expect(quantile([1, 2, 3, 4], 1)).toBe(4);
  });
  it('mean and histogram', () => {
    expect(mean([])).toBeNull();
    expect(mean([1, 2, 6])).toBe(3);
    expect(histogram([0, 0, 1, 0.5, 0.49], 0, 1, 2)).toEqual([3, 2]);
  });
});

describe('bootstrap of many values (m-out-of-n, rescaled)', () => {
  it('draws all n up to the cap: the same interval as without a cap', () => {
    const xs = Array.from({ length: 500 }, (_, i) => i % 7);
    expect(bootstrapMeanInterval(xs, { maxDraws: 500 })).toEqual(bootstrapMeanInterval(xs, { maxDraws: 10_000 }));
  });
  it('above the cap keeps the width of the n-draw interval (±1.96 σ/√n)', () => {
    // 0..99 repeated 100 times: n = 10 000, mean 49.5, σ = 28.866, se = 0.28866, ±1.96 se = ±0.5658.
    const xs = Array.from({ length: 10_000 }, (_, i) => i % 100);
    const capped = bootstrapMeanInterval(xs, { maxDraws: 1000, resamples: 4000 })!;
    expect(capped.low).toBeCloseTo(49.5 - 0.5658, 1);
    expect(capped.high).toBeCloseTo(49.5 + 0.5658, 1);
  });
});

describe('mulberry32', () => {
  /** The published algorithm, state kept unsigned: the sequences must be the same numbers. */
  function reference(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
  }
  it('gives the reference sequence for any seed', () => {
    for (const seed of [0, 1, 20_261_201, 0x7fffffff, 0x80000000, 0xffffffff, -5]) {
      const want = reference(seed);
      const f = mulberry32(seed);
      const g = new Mulberry32(seed);
      for (let i = 0; i < 100_000; i++) {
        const w = want();
        if (f() !== w || g.next() !== w) expect.fail(`seed ${seed}: draw ${i} differs`);
      }
    }
    expect(new Mulberry32(1).next()).toBe(0.6270739405881613);
  });
});
