/** The benches' median (bench/lib/median.ts): of an even count, the mean of the two middle values. */
import { describe, expect, it } from 'vitest';
import { median } from '../../bench/lib/median.js';

describe('median', () => {
  it('is the middle value of an odd count and the mean of the two middle values of an even one', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1.62, 2.22])).toBeCloseTo(1.92, 12);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});
