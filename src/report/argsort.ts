/**
 * The indices 0…n−1 ordered by `keys[i]`, ties by index: a heapsort of the indices in place, so the
 * only memory is the Uint32Array returned. A typed array's `sort` with a comparator copies its
 * values into two arrays of the JS heap (8 bytes a value each): 40 MiB for the 2.5 × 10^6 tasks of
 * a 10^7-row report, every time the live estimate is replayed (estimate-history.ts).
 */
export function argsortByKey(keys: ArrayLike<number>): Uint32Array {
  const n = keys.length;
  const idx = new Uint32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  // (key, index) is a total order: the result is the one every correct sort gives.
  const less = (a: number, b: number) => keys[a] < keys[b] || (keys[a] === keys[b] && a < b);
  const siftDown = (start: number, end: number) => {
    let root = start;
    for (;;) {
      let child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && less(idx[child], idx[child + 1])) child++;
      if (!less(idx[root], idx[child])) return;
      const t = idx[root];
      idx[root] = idx[child];
      idx[child] = t;
      root = child;
    }
  };
  for (let start = (n >> 1) - 1; start >= 0; start--) siftDown(start, n);
  for (let end = n - 1; end > 0; end--) {
    const t = idx[0];
    idx[0] = idx[end];
    idx[end] = t;
    siftDown(0, end);
  }
  return idx;
}
