import { describe, expect, it } from 'vitest';
import { Mulberry32 } from '../../src/reference-server/prng.js';
import { clusteredMean, clusteredMeanOfRuns } from '../../src/stats/clustered.js';
import { chiSquare1UpperTail, erfc, normalQuantile, normalUpperTail, twoSidedZ } from '../../src/stats/normal.js';

describe('normal distribution helpers', () => {
  it('erfc matches tabulated values to 1e-7 (relative)', () => {
    for (const [x, v] of [
      [0, 1],
      [0.5, 0.4795001221869535],
      [1, 0.157299207050285],
      [2, 0.004677734981047266],
      [3, 2.209049699858544e-5],
      [-1, 1.842700792949715],
    ]) {
      expect(Math.abs(erfc(x) - v) / v).toBeLessThan(1.2e-7);
    }
  });

  it('the normal quantile matches tabulated z values to 1e-8', () => {
    expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 8);
    expect(normalQuantile(0.995)).toBeCloseTo(2.5758293035489004, 8);
    expect(normalQuantile(0.01)).toBeCloseTo(-2.3263478740408408, 8);
    expect(twoSidedZ(0.9)).toBeCloseTo(1.6448536269514722, 8);
    expect(() => normalQuantile(1)).toThrow(/not in \(0, 1\)/);
  });

  it('tails: χ²₁ at 3.841459 is 0.05, and equals the two-sided normal tail of its root', () => {
    expect(chiSquare1UpperTail(3.841458820694124)).toBeCloseTo(0.05, 6);
    expect(chiSquare1UpperTail(6.25)).toBeCloseTo(2 * normalUpperTail(2.5), 12);
    expect(chiSquare1UpperTail(0)).toBe(1);
  });
});

/** Miller's formula term by term: SE_CLT² plus the cross products of distinct rows of one cluster. */
function bruteForceSe(values: number[], clusters: (string | number)[]): number {
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  let clt = 0;
  for (const v of values) clt += (v - mean) ** 2;
  clt /= n * (n - 1);
  let cross = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i !== j && clusters[i] === clusters[j]) cross += (values[i] - mean) * (values[j] - mean);
    }
  }
  return Math.sqrt(Math.max(0, clt + cross / (n * n)));
}

describe('clustered standard errors (Miller 2024)', () => {
  it('a worked example by hand: [1, 0 | 1, 1] gives SE² = 0.0625 − 0.015625 = 0.046875', () => {
    // mean 0.75; residuals .25, −.75 | .25, .25; Σr² = .75, SE_CLT² = .75/12 = .0625;
    // cross terms 2(.25)(−.75) + 2(.25)(.25) = −.25, over n² = 16: −.015625.
    const m = clusteredMean([1, 0, 1, 1], ['a', 'a', 'b', 'b'])!;
    expect(m.mean).toBe(0.75);
    expect(m.seIndependent).toBeCloseTo(0.25, 12);
    expect(m.se).toBeCloseTo(Math.sqrt(0.046875), 12);
    expect(m.clusters).toBe(2);
    expect(m.lo).toBeCloseTo(0.75 - 1.959963984540054 * Math.sqrt(0.046875), 7);
  });

  it('one row per task: the textbook standard error of the mean, s/√n', () => {
    const xs = [0.2, 0.9, 0.4, 0.4, 1, 0];
    const n = xs.length;
    const mean = xs.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
    const m = clusteredMean(xs, [1, 2, 3, 4, 5, 6])!;
    expect(m.se).toBeCloseTo(sd / Math.sqrt(n), 12);
    expect(m.se).toBe(m.seIndependent);
  });

  it('equals the term-by-term formula on seeded clustered data, and exceeds the independent SE when tasks are alike', () => {
    const r = new Mulberry32(42);
    const values: number[] = [];
    const clusters: number[] = [];
    for (let task = 0; task < 40; task++) {
      const p = r.next();
      const k = 1 + Math.floor(r.next() * 6);
      for (let i = 0; i < k; i++) {
        values.push(r.next() < p ? 1 : 0);
        clusters.push(task);
      }
    }
    const m = clusteredMean(values, clusters)!;
    expect(m.se).toBeCloseTo(bruteForceSe(values, clusters), 12);
    expect(m.se).toBeGreaterThan(m.seIndependent);
  });

  it('paired: the clustered mean of new − old; no change gives 0 ± 0; under 2 rows there is no SE', () => {
    const olds = [1, 0, 1, 0, 1, 1];
    const news = [1, 1, 1, 0, 0, 1];
    const tasks = [3, 3, 7, 7, 9, 9];
    const diff = (o: number, n: number) => n - o;
    const p = clusteredMeanOfRuns([{ oldValues: olds, newValues: news, clusters: tasks }], diff)!;
    const d = clusteredMean([0, 1, 0, 0, -1, 0], tasks)!;
    expect(p).toEqual(d);
    expect(clusteredMeanOfRuns([{ oldValues: olds, newValues: olds, clusters: tasks }], diff)).toMatchObject({
      mean: 0,
      se: 0,
      lo: 0,
      hi: 0,
    });
    expect(clusteredMean([1], ['a'])).toBeNull();
    expect(() => clusteredMeanOfRuns([{ oldValues: [1], newValues: [1, 0], clusters: [0] }], diff)).toThrow(/1 old values, 2 new ones/);
  });
});
