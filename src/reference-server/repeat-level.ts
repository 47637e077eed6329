/**
 * `repeat_level_metrics` of the reference server's `/aggregate_metrics`, shaped as NeMo Gym 0.7.0's
 * default aggregation shapes them: one entry per rollout index (a "repeat"), in index order, only
 * when the rows have more than one rollout index (else none). An entry holds `_ng_rollout_index`,
 * `sample_count` (tasks with a row of that repeat), `missing_count` (tasks without), then for each
 * numeric field, fields in name order, its `mean/`, `median/`, `std/` (sample std, 0 for one
 * value), `sem/`, `min/`, `max/`, `p25/` and `p75/` (linear interpolation) over the repeat's rows
 * that have it. Unlike 0.7.0, no `ci_low_95/` / `ci_high_95/` (Student-t intervals) are given. Pure.
 */
import { pairwiseSum } from './describe-stats.js';

/** A row as the aggregation keeps it (see aggregate.ts): its indices and numeric fields as (column id, value) pairs. */
export interface RepeatRow {
  task: number | string;
  rollout: number | string;
  fields: readonly number[];
}

/** numpy's linear interpolation between `a` and `b` at `t` (its `_lerp`, exact at both ends). */
function lerp(a: number, b: number, t: number): number {
  const diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

/** The `q` quantile of sorted values, as numpy's default (linear) method computes it. */
function quantile(sorted: Float64Array, q: number): number {
  const n = sorted.length;
  const at = n * q + (1 - q) - 1; // numpy's virtual index with alpha = beta = 1
  const lo = Math.max(0, Math.min(n - 1, Math.floor(at)));
  const hi = Math.min(n - 1, lo + 1);
  return lerp(sorted[lo], sorted[hi], at - lo);
}

/** The stats of one field over one repeat, in 0.7.0's key order. */
function describe(values: Float64Array): Array<[string, number]> {
  const n = values.length;
  const mean = pairwiseSum(values, 0, n) / n;
  let std = 0.0;
  if (n > 1) {
    const squares = values.map((v) => (mean - v) ** 2);
    std = Math.sqrt(pairwiseSum(squares, 0, n) / (n - 1));
  }
  const sorted = Float64Array.from(values).sort();
  const mid = n >> 1;
  const median = n % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return [
    ['mean', mean],
    ['median', median],
    ['std', std],
    ['sem', std / Math.sqrt(n)],
    ['min', sorted[0]],
    ['max', sorted[n - 1]],
    ['p25', quantile(sorted, 0.25)],
    ['p75', quantile(sorted, 0.75)],
  ];
}

/**
 * The repeat-level metrics of `rows` (any order); `columnNames[id]` names the column ids of their
 * fields, and `compareIndex` orders rollout indices.
 */
export function repeatLevelMetrics(
  rows: readonly RepeatRow[],
  columnNames: readonly string[],
  compareIndex: (a: number | string, b: number | string) => number,
): Array<Record<string, unknown>> {
  const repeats = new Map<number | string, RepeatRow[]>();
  for (const row of rows) {
    const repeat = repeats.get(row.rollout);
    if (repeat) repeat.push(row);
    else repeats.set(row.rollout, [row]);
  }
  if (repeats.size < 2) return [];
  const totalTasks = new Set(rows.map((r) => r.task)).size;
  const columns = columnNames.map((name, id) => ({ name, id })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return [...repeats.keys()].sort(compareIndex).map((rollout) => {
    const repeat = repeats.get(rollout)!;
    const sampleCount = new Set(repeat.map((r) => r.task)).size;
    const entry: Record<string, unknown> = {
      _ng_rollout_index: rollout,
      sample_count: sampleCount,
      missing_count: totalTasks - sampleCount,
    };
    const values = columnNames.map((): number[] => []);
    for (const row of repeat) for (let i = 0; i < row.fields.length; i += 2) values[row.fields[i]].push(row.fields[i + 1]);
    for (const { name, id } of columns) {
      if (values[id].length === 0) continue;
      for (const [stat, value] of describe(Float64Array.from(values[id]))) entry[`${stat}/${name}`] = value;
    }
    return entry;
  });
}
