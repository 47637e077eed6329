/** The join records' codec (src/planning/keyed-records.ts): every number comes back, in fewer bytes than doubles. */
import { describe, expect, it } from 'vitest';
import { keyedRecordCodec, type KeyedRecord } from '../../src/planning/keyed-records.js';

function roundTrip(r: KeyedRecord): KeyedRecord {
  const size = keyedRecordCodec.size(r);
  const buf = Buffer.alloc(size + 8, 0xee);
  expect(keyedRecordCodec.write(r, buf, 3)).toBe(3 + size); // where it ends
  expect(buf[size + 3]).toBe(0xee); // wrote exactly `size` bytes
  expect(keyedRecordCodec.maxSize!(r)).toBeGreaterThanOrEqual(size);
  return keyedRecordCodec.read(buf, 3, size);
}

describe('keyed record codec', () => {
  // A record holds at most 255 numbers (its count is one byte).
  it('round-trips integers of every size and sign, digest halves, fractions, NaN and infinities', () => {
    const edges = [
      0,
      1,
      -1,
      31,
      32,
      -32,
      -33,
      127,
      128,
      2 ** 21,
      2 ** 32 - 1,
      2 ** 50,
      -(2 ** 50),
      2 ** 50 + 2,
      2 ** 53 - 1,
      -(2 ** 53),
      0.5,
      -0.25,
      1e-300,
      NaN,
      Infinity,
      -Infinity,
    ];
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const randoms = Array.from({ length: 250 }, (_, i) =>
      i % 3 === 0 ? random() * 2 - 2 ** 31 : i % 3 === 1 ? random() / 7 : random() * 2 ** 19,
    );
    for (const nums of [edges, randoms, []]) {
      const back = roundTrip({ key: 'tâsk:3', nums, text: null });
      expect(back.nums).toEqual(nums);
      expect(back.key).toBe('tâsk:3');
      expect(back.text).toBeNull();
    }
    expect(roundTrip({ key: '', nums: [5], text: 'a message ✓' }).text).toBe('a message ✓');
    expect(roundTrip({ key: '😀€', nums: [1.5, -(2 ** 60)], text: '😀€\u0000' }).key).toBe('😀€');
  });

  it("a plan's input record (line, offset, length, agent, server, digest halves) takes under half the bytes of doubles", () => {
    const nums = [3, 9_999_999, 4_123_456_789, 612, 1, 0, 4_000_000_001, 123_456_789];
    const r = { key: '12345:3', nums, text: null };
    expect(keyedRecordCodec.size(r) - (4 + 7 + 1 + 4)).toBeLessThan((8 * nums.length) / 2);
  });
});
