import { describe, expect, it } from 'vitest';
import { NarrowColumn } from '../../src/report/number-column.js';

const filled = (values: number[]) => {
  const c = new NarrowColumn();
  for (const v of values) c.push(v);
  return c.take();
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

  it('hands its values over without the spare room it grew (a column of 10^7 rows held up to twice its values)', () => {
    for (const n of [1, 15, 16, 17, 1000, 100_000]) {
      const rewards = filled(Array.from({ length: n }, (_, i) => i % 2));
      const tasks = filled(Array.from({ length: n }, (_, i) => 1000 + i));
      const order = new NarrowColumn();
      for (let i = 0; i < n; i++) order.push(i / 2);
      const places = order.take();
      for (const [got, bytes] of [
        [rewards, 1],
        [tasks, 4],
        [places, 8],
      ] as const) {
        expect(got).toHaveLength(n);
        // At most a tenth to spare (a copy below that is not worth it).
        expect(got.buffer.byteLength).toBeLessThanOrEqual(Math.max(16, Math.ceil(n * 1.1)) * bytes);
      }
      expect(places[n - 1]).toBe((n - 1) / 2);
      expect(tasks[n - 1]).toBe(999 + n);
      // Taken: the columns start again empty.
      expect(order.take()).toHaveLength(0);
    }
  });

  it('sized right, hands its values over in place, on shared memory a thread reads without a copy', () => {
    const c = new NarrowColumn(1000);
    for (let i = 0; i < 1000; i++) c.push(i);
    const got = c.take();
    expect(got).toBeInstanceOf(Uint32Array);
    expect(got.buffer).toBeInstanceOf(SharedArrayBuffer);
    // The values and nothing more: no growth, no trimming copy.
    expect(got.buffer.byteLength).toBe(4000);
    expect(got[999]).toBe(999);
  });
});
