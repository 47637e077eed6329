import { describe, expect, it } from 'vitest';
import { argsortByKey } from '../../src/report/argsort.js';
import { mulberry32 } from '../../src/reference-server/prng.js';

/** The order a comparator sort gives: by key, ties by index. */
const expected = (keys: ArrayLike<number>) => Array.from({ length: keys.length }, (_, i) => i).sort((x, y) => keys[x] - keys[y] || x - y);

describe('argsortByKey (the report replays tasks in plan order)', () => {
  it.each([
    ['no keys', 0, () => 0],
    ['one key', 1, () => 5],
    ['many ties', 2_000, (r: () => number) => Math.floor(r() * 7)],
    ['53-bit ranks (random order)', 2_000, (r: () => number) => Math.floor(r() * 2 ** 21) * 2 ** 32 + Math.floor(r() * 2 ** 32)],
    ['already in order', 1_000, (_r: () => number, i: number) => i],
    ['in reverse order', 1_000, (_r: () => number, i: number) => -i],
  ])('orders indices by key, ties by index: %s', (_label, n, key) => {
    const r = mulberry32(11);
    const keys = Float64Array.from({ length: n }, (_, i) => key(r, i));
    const got = argsortByKey(keys);
    expect(got).toBeInstanceOf(Uint32Array);
    expect(Array.from(got)).toEqual(expected(keys));
  });
});
