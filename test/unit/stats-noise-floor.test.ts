import { describe, expect, it } from 'vitest';
import { cohenKappa, noiseFloor, noiseFloorText, type NoisePair } from '../../src/stats/noise-floor.js';

/** `count` copies of one pair. */
const times = (count: number, first: number, second: number | null): NoisePair[] =>
  Array.from({ length: count }, () => ({ first, second }));

describe('the judge noise floor', () => {
  it("Cohen's κ matches the worked example of Wikipedia's article (20/5/10/15: κ = 0.4)", () => {
    // Two readers of 50 grant applications: both yes 20, A yes B no 5, A no B yes 10, both no 15.
    expect(cohenKappa(20, 5, 10, 15)).toBeCloseTo(0.4, 12);
  });

  it('κ is 1 for perfect agreement with both classes, and undefined (null) with one class only', () => {
    expect(cohenKappa(3, 0, 0, 7)).toBe(1);
    expect(cohenKappa(5, 0, 0, 0)).toBeNull();
    expect(cohenKappa(0, 0, 0, 0)).toBeNull();
  });

  it('counts flips on the pass rule (reward >= 0.5), κ and mean |Δreward| by hand', () => {
    // 4 pass twice (1 → 1), 1 pass then fail (1 → 0), 1 fail then pass (0 → 0.5), 4 fail twice (0 → 0.25).
    const pairs = [...times(4, 1, 1), ...times(1, 1, 0), ...times(1, 0, 0.5), ...times(4, 0, 0.25)];
    const f = noiseFloor(pairs);
    expect(f).toMatchObject({ sampled: 10, n: 10, bothPass: 4, passFail: 1, failPass: 1, bothFail: 4 });
    expect(f.flipRate).toBeCloseTo(0.2, 12);
    // p_o = 0.8, p_e = 0.5·0.5 + 0.5·0.5 = 0.5: κ = 0.3 / 0.5 = 0.6.
    expect(f.kappa).toBeCloseTo(0.6, 12);
    // |Δ|: 4·0 + 1 + 0.5 + 4·0.25 = 2.5 over 10.
    expect(f.meanAbsDelta).toBeCloseTo(0.25, 12);
  });

  it('rows without a second grade are sampled but not counted; none graded gives nulls', () => {
    const f = noiseFloor([...times(2, 1, 1), ...times(1, 0, null)]);
    expect(f).toMatchObject({ sampled: 3, n: 2, flipRate: 0, kappa: null, meanAbsDelta: 0 });
    expect(noiseFloor(times(2, 1, null))).toMatchObject({ sampled: 2, n: 0, flipRate: null, kappa: null, meanAbsDelta: null });
  });

  it('says it in one line', () => {
    const pairs = [...times(4, 1, 1), ...times(1, 1, 0), ...times(1, 0, 0.5), ...times(4, 0, 0.25)];
    expect(noiseFloorText(noiseFloor(pairs), 10)).toBe('judge noise floor (N=10): flip rate 20.0%, κ 0.600, mean |Δreward| 0.250');
    expect(noiseFloorText(noiseFloor([...times(2, 1, 1), ...times(1, 0, null)]), 5)).toBe(
      'judge noise floor (N=2 graded of 3 re-judged, 5 asked): flip rate 0.0%, κ undefined (one class only), mean |Δreward| 0.000',
    );
  });
});
