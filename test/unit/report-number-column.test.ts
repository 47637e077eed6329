import { describe, expect, it } from 'vitest';
import { concatNumbers, indicators, NarrowColumn } from '../../src/report/number-column.js';

const filled = (values: number[]) => {
  const c = new NarrowColumn();
  for (const v of values) c.push(v);
  return c.values();
};

describe("the verdict join's narrow columns (number-column.ts)", () => {
  it('holds 0/1 rewards in one byte each, task ordinals in four, and reads back the very numbers pushed', () => {
    const rewards = Array.from({ length: 1000 }, (_, i) => ((i * 7) % 3 === 0 ? 1 : 0));
    expect(filled(rewards)).toBeInstanceOf(Uint8Array);
    expect(Array.from(filled(rewards))).toEqual(rewards);
    const tasks = Array.from({ length: 1000 }, (_, i) => Math.floor(i / 3));
    expect(filled(tasks)).toBeInstanceOf(Uint32Array);
    expect(Array.from(filled(tasks))).toEqual(tasks);
  });

  it.each([
    ['a fraction', 0.25],
    ['a negative number', -1],
    ['minus zero', -0],
    ['an integer of 2^32 or more', 2 ** 32],
    ['NaN', NaN],
  ])('widens to 8 bytes a value at %s, keeping the values before it', (_, odd) => {
    const values = [0, 1, 300, 1, odd, 0, 1];
    const got = filled(values);
    expect(got).toBeInstanceOf(Float64Array);
    expect(Array.from(got)).toEqual(values);
    expect(Object.is(got[4], odd)).toBe(true);
  });

  it('concatenates columns of different kinds in the widest, and makes 0/1 indicators of one byte', () => {
    const all = concatNumbers([filled([0, 1]), filled([0.5, 1]), filled([7])]);
    expect(all).toBeInstanceOf(Float64Array);
    expect(Array.from(all)).toEqual([0, 1, 0.5, 1, 7]);
    expect(concatNumbers([filled([0, 1]), filled([1])])).toBeInstanceOf(Uint8Array);
    const pass = indicators(all, (x) => x >= 0.5);
    expect(pass).toBeInstanceOf(Uint8Array);
    expect(Array.from(pass)).toEqual([0, 1, 1, 1, 1]);
  });
});
