/**
 * Clusters read as runs: rows held in parts (the report's agents) whose cluster ids are
 * non-decreasing within each part (the verdict join's task ordinals, in key order), so that one
 * cluster's rows are one run of each part. `ClusterRuns` walks the clusters in ascending id, each
 * with its run in every part: per-cluster sums need no slot per cluster, only one cluster's at a time.
 */

/** What `ClusterRuns` reads of a part: its rows' cluster ids (non-decreasing numbers). */
export type ClusterIds = ArrayLike<number>;

export class ClusterRuns {
  /** The current cluster's run in part p: rows `[from[p], to[p])` (empty when from = to). */
  readonly from: number[];
  readonly to: number[];
  /** The current cluster's id. */
  id = NaN;
  private readonly at: number[];

  constructor(private readonly parts: readonly ClusterIds[]) {
    this.from = parts.map(() => 0);
    this.to = parts.map(() => 0);
    this.at = parts.map(() => 0);
  }

  /** Moves to the next cluster (the least id left in any part); false when every row was visited. */
  next(): boolean {
    let id = Infinity;
    for (let p = 0; p < this.parts.length; p++) if (this.at[p] < this.parts[p].length) id = Math.min(id, this.parts[p][this.at[p]]);
    if (id === Infinity) return false;
    for (let p = 0; p < this.parts.length; p++) {
      const ids = this.parts[p];
      let i = this.at[p];
      this.from[p] = i;
      while (i < ids.length && ids[i] === id) i++;
      if (i < ids.length && !(ids[i] > id))
        throw new RangeError(`cluster runs: part ${p} has cluster id ${ids[i]} after ${id} (ids must be non-decreasing numbers)`);
      this.to[p] = this.at[p] = i;
    }
    this.id = id;
    return true;
  }
}
