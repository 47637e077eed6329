/**
 * Cluster ids numbered 0, 1, … in the order they first appear, for per-cluster sums in typed arrays
 * (a slot each) instead of a map of boxed values. The report's clusters are task ordinals (dense
 * integers): their slots are found in an Int32Array indexed by id, 4 bytes a task; any other ids
 * (strings, sparse numbers) in a Map. The order of the slots is the order a Map would iterate in,
 * so sums taken slot by slot are the same numbers.
 */

/** Ids above this many times the row count (plus a margin) are too sparse for an array indexed by id. */
const DENSE_SPREAD = 4;
const DENSE_MARGIN = 1024;

export class ClusterSlots {
  /** Slots given out (distinct ids seen). */
  size = 0;
  /** Slots there may be at most: size the per-slot arrays with it. */
  readonly capacity: number;
  private readonly byId: Int32Array | null;
  private readonly map = new Map<string | number, number>();

  constructor(clusters: ArrayLike<string | number>) {
    const n = clusters.length;
    let max = -1;
    let dense = true;
    for (let i = 0; i < n && dense; i++) {
      const c = clusters[i];
      dense = typeof c === 'number' && Number.isInteger(c) && c >= 0 && c <= DENSE_SPREAD * n + DENSE_MARGIN;
      if (dense && (c as number) > max) max = c as number;
    }
    this.byId = dense ? new Int32Array(max + 1).fill(-1) : null;
    this.capacity = dense ? Math.min(n, max + 1) : n;
  }

  /** The slot of `id` (a new one the first time it is seen). */
  slot(id: string | number): number {
    if (this.byId) {
      let s = this.byId[id as number];
      if (s < 0) s = this.byId[id as number] = this.size++;
      return s;
    }
    let s = this.map.get(id);
    if (s === undefined) this.map.set(id, (s = this.size++));
    return s;
  }
}
