import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { ClusterSlots } from '../../src/stats/cluster-slots.js';
import { clusteredMean } from '../../src/stats/clustered.js';

const slotsOf = (ids: ArrayLike<string | number>) => {
  const s = new ClusterSlots(ids);
  return { slots: Array.from(ids, (id) => s.slot(id)), size: s.size, capacity: s.capacity };
};

describe('cluster slots (typed arrays per cluster instead of a map)', () => {
  it('numbers ids in the order they first appear, dense task ordinals and any other ids alike', () => {
    expect(slotsOf(Uint32Array.from([5, 5, 2, 9, 2, 5]))).toEqual({ slots: [0, 0, 1, 2, 1, 0], size: 3, capacity: 6 });
    expect(slotsOf(['b', 'a', 'b', 'c'])).toEqual({ slots: [0, 1, 0, 2], size: 3, capacity: 4 });
    // Sparse, negative or fractional ids go to the map, with the same numbering.
    expect(slotsOf([1e12, 3, 1e12]).slots).toEqual([0, 1, 0]);
    expect(slotsOf([-1, 0.5, -1]).slots).toEqual([0, 1, 0]);
  });

  it.each([0, 1, 2, 3])('gives the very numbers of a map keyed by task (seed %i)', (seed) => {
    const r = mulberry32(seed);
    const n = 500;
    const tasks = Float64Array.from({ length: n }, (_, i) => (seed % 2 ? Math.floor(i / 3) : Math.floor(r() * 80)));
    const news = Float64Array.from({ length: n }, () => (seed < 2 ? Math.round(r()) : r()));
    const asStrings = Array.from(tasks, (t) => `t${t}`);
    // A string id always takes the map: the reference the dense arrays must match exactly.
    expect(clusteredMean(news, tasks)).toEqual(clusteredMean(news, asStrings));
  });
});
