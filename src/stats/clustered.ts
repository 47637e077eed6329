/**
 * Post-hoc means, and paired differences, with standard errors clustered by task, for the report.
 *
 * Method: Miller 2024, "Adding Error Bars to Evals: A Statistical Approach to Language Model
 * Evaluations" (arXiv 2411.00640). For scores s_i with mean s̄ over n rows,
 *   SE_CLT² = Σ (s_i − s̄)² / (n (n − 1))                                   (his eq. for independent rows)
 *   SE_clustered² = SE_CLT² + (1/n²) Σ_c Σ_i Σ_{j≠i} (s_{i,c} − s̄)(s_{j,c} − s̄)   (rows i, j of cluster c)
 * computed here as SE_CLT² + (1/n²) Σ_c [(Σ_i r_{i,c})² − Σ_i r_{i,c}²] with r = s − s̄ (the same
 * sum, O(n)). The cross terms can be negative (rows of a task disagreeing more than chance); the
 * variance is then floored at 0. Paired comparison (his §"paired analysis"): the same on the per-row
 * differences new − old, so that what is common to both scores of a row (its difficulty) cancels.
 * The interval is estimate ± z·SE with z the normal quantile of the level: a large-sample
 * approximation (many tasks), valid only when computed once on the full data (see docs/statistics.md
 * on why the live view uses the confidence sequence of wor-cs.ts instead).
 * Assumptions: tasks (clusters) are independent draws; rows within a task may be correlated.
 */
import { ClusterRuns, type ClusterIds } from './cluster-runs.js';
import { ClusterSlots } from './cluster-slots.js';
import { twoSidedZ } from './normal.js';

/** A mean with its clustered and unclustered standard errors and interval. */
export interface ClusteredMean {
  mean: number;
  /** Standard error clustered by task (Miller's SE_clustered) and the one treating rows as independent. */
  se: number;
  seIndependent: number;
  lo: number;
  hi: number;
  rows: number;
  clusters: number;
}

/**
 * The mean of `values` with Miller's clustered standard error, rows grouped by `clusters` (same
 * index; equal ids are one task), and the interval at `confidence`. `null` for fewer than 2 rows.
 */
export function clusteredMean(values: ArrayLike<number>, clusters: ArrayLike<string | number>, confidence = 0.95): ClusteredMean | null {
  if (clusters.length !== values.length) throw new RangeError(`clustered mean: ${values.length} values but ${clusters.length} cluster ids`);
  return clusteredMeanAt(values.length, (i) => values[i], clusters, confidence);
}

/**
 * `clusteredMean` of the `n` values `valueAt(0…n−1)`: nothing per row is allocated. Per-cluster
 * residual sums are kept a slot each (cluster-slots.ts), summed in the order clusters first appear.
 */
function clusteredMeanAt(
  n: number,
  valueAt: (i: number) => number,
  clusters: ArrayLike<string | number>,
  confidence: number,
): ClusteredMean | null {
  if (n < 2) return null;
  let total = 0;
  for (let i = 0; i < n; i++) total += valueAt(i);
  const mean = total / n;
  const slots = new ClusterSlots(clusters);
  const residualSums = new Float64Array(slots.capacity);
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const r = valueAt(i) - mean;
    squares += r * r;
    residualSums[slots.slot(clusters[i])] += r;
  }
  let clusterSquares = 0;
  for (let s = 0; s < slots.size; s++) clusterSquares += residualSums[s] * residualSums[s];
  return meanOfSums({ n, mean, squares, clusterSquares, clusters: slots.size }, confidence);
}

/** What a clustered mean is made of: the rows' mean, Σ r² of their residuals, Σ_c (Σ_i r_{i,c})² and the clusters counted. */
interface ResidualSums {
  n: number;
  mean: number;
  squares: number;
  clusterSquares: number;
  clusters: number;
}

function meanOfSums({ n, mean, squares, clusterSquares, clusters }: ResidualSums, confidence: number): ClusteredMean {
  const varianceIndependent = squares / (n * (n - 1));
  const cross = (clusterSquares - squares) / (n * n);
  const se = Math.sqrt(Math.max(0, varianceIndependent + cross));
  const z = twoSidedZ(confidence);
  return {
    mean,
    se,
    seIndependent: Math.sqrt(varianceIndependent),
    lo: mean - z * se,
    hi: mean + z * se,
    rows: n,
    clusters,
  };
}

/** Paired rows of one part (an agent): old and new values by index, and each row's cluster id (non-decreasing). */
export interface PairedPart {
  oldValues: ArrayLike<number>;
  newValues: ArrayLike<number>;
  clusters: ClusterIds;
}

/** A row's value from its old and new ones (the paired difference: new − old). */
export type RowValue = (oldValue: number, newValue: number) => number;

/**
 * `clusteredMean` of `value(old, new)` over the rows of `parts` one after another, clusters read as
 * runs (cluster-runs.ts): nothing per row or per cluster is allocated. The mean and Σ r² are summed
 * in the parts' row order, the clusters' sums in ascending cluster id (each cluster's rows in part
 * order): for one part, the very numbers of `clusteredMean` on its rows (its clusters first appear
 * in ascending id); over several, the same up to the rounding of the order clusters are added in.
 */
export function clusteredMeanOfRuns(parts: readonly PairedPart[], value: RowValue, confidence = 0.95): ClusteredMean | null {
  const n = parts.reduce((s, p) => s + p.oldValues.length, 0);
  for (const p of parts)
    if (p.newValues.length !== p.oldValues.length || p.clusters.length !== p.oldValues.length)
      throw new RangeError(
        `clustered mean: ${p.oldValues.length} old values, ${p.newValues.length} new ones, ${p.clusters.length} cluster ids`,
      );
  if (n < 2) return null;
  let total = 0;
  for (const p of parts) for (let i = 0; i < p.oldValues.length; i++) total += value(p.oldValues[i], p.newValues[i]);
  const mean = total / n;
  let squares = 0;
  for (const p of parts)
    for (let i = 0; i < p.oldValues.length; i++) {
      const r = value(p.oldValues[i], p.newValues[i]) - mean;
      squares += r * r;
    }
  const runs = new ClusterRuns(parts.map((p) => p.clusters));
  let clusterSquares = 0;
  let clusters = 0;
  while (runs.next()) {
    let sum = 0;
    for (let k = 0; k < parts.length; k++) {
      const p = parts[k];
      for (let i = runs.from[k]; i < runs.to[k]; i++) sum += value(p.oldValues[i], p.newValues[i]) - mean;
    }
    clusterSquares += sum * sum;
    clusters++;
  }
  return meanOfSums({ n, mean, squares, clusterSquares, clusters }, confidence);
}
