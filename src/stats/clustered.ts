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
    clusters: slots.size,
  };
}

/** The paired difference new − old (same index is the same row), clustered by task (no array of differences is made). */
export function pairedDifference(
  oldValues: ArrayLike<number>,
  newValues: ArrayLike<number>,
  clusters: ArrayLike<string | number>,
  confidence = 0.95,
): ClusteredMean | null {
  if (oldValues.length !== newValues.length) {
    throw new RangeError(`paired difference: ${oldValues.length} old values but ${newValues.length} new ones`);
  }
  if (clusters.length !== oldValues.length)
    throw new RangeError(`clustered mean: ${oldValues.length} values but ${clusters.length} cluster ids`);
  return clusteredMeanAt(oldValues.length, (i) => newValues[i] - oldValues[i], clusters, confidence);
}
