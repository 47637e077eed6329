/**
 * A McNemar-type test for pass/fail flips between two scorings of the same rows, with rows
 * clustered by task, for the report.
 *
 * Method: Durkalski, Palesch, Lipsitz & Rust 2003, "Analysis of clustered matched-pair data",
 * Statistics in Medicine 22:2417–2428. For each task k with n_k paired rows, b_k rows went
 * pass → fail and c_k fail → pass; with d_k = (b_k − c_k) / n_k,
 *   X² = (Σ_k d_k)² / Σ_k d_k²,   approximately χ² with 1 degree of freedom under "no change"
 * (equal marginal pass rates). It needs no model of the correlation within a task. With one row per
 * task it is exactly McNemar's (b − c)² / (b + c) (without continuity correction); this is the
 * form of the R package clust.bin.pair (`durkalski.test`). Yang, Sun & Hardin
 * (Biometrical Journal, 2010) compare it with Obuchowski's and Eliasziw's tests.
 * Assumptions: tasks independent; a large-sample χ² approximation (many tasks with flips).
 */
import { ClusterRuns } from './cluster-runs.js';
import type { PairedPart } from './clustered.js';
import { chiSquare1UpperTail } from './normal.js';

/** One task's paired pass/fail counts: `pf` passed before and fails now (1→0), `fp` the reverse. */
export interface TaskFlips {
  rows: number;
  pf: number;
  fp: number;
}

export interface ClusteredMcNemar {
  /** X² and its p-value (two-sided); null when no task has more flips one way than the other. */
  statistic: number | null;
  pValue: number | null;
  /** Rows 1→0 and 0→1 over all tasks, and the tasks counted. */
  pf: number;
  fp: number;
  tasks: number;
}

/** Durkalski's clustered McNemar test over tasks. */
export function clusteredMcNemar(tasks: readonly TaskFlips[]): ClusteredMcNemar {
  const sums = new FlipSums();
  for (const t of tasks) sums.add(t.rows, t.pf, t.fp);
  return sums.result();
}

/** The test's sums, task by task: Σ d_k, Σ d_k² and the flips. */
class FlipSums {
  private sum = 0;
  private squares = 0;
  private pf = 0;
  private fp = 0;
  private tasks = 0;

  /** One task: `rows` paired rows, `b` of them 1→0 and `c` 0→1. */
  add(rows: number, b: number, c: number): void {
    if (!(rows > 0) || b + c > rows) throw new RangeError(`clustered McNemar: a task with ${rows} rows cannot have ${b} + ${c} flips`);
    const d = (b - c) / rows;
    this.sum += d;
    this.squares += d * d;
    this.pf += b;
    this.fp += c;
    this.tasks++;
  }

  result(): ClusteredMcNemar {
    const { sum, squares, pf, fp, tasks } = this;
    if (squares === 0) return { statistic: null, pValue: null, pf, fp, tasks };
    const statistic = (sum * sum) / squares;
    return { statistic, pValue: chiSquare1UpperTail(statistic), pf, fp, tasks };
  }
}

/**
 * The test over paired rows in parts (an agent each), clusters read as runs (cluster-runs.ts: ids
 * non-decreasing in each part), a row passing when `passes` says so: nothing per row or per task
 * is allocated. Tasks are taken in ascending id (for one part, the order they first appear).
 */
export function clusteredMcNemarOfRuns(parts: readonly PairedPart[], passes: (value: number) => boolean): ClusteredMcNemar {
  const runs = new ClusterRuns(parts.map((p) => p.clusters));
  const sums = new FlipSums();
  while (runs.next()) {
    let rows = 0;
    let b = 0;
    let c = 0;
    for (let k = 0; k < parts.length; k++) {
      const p = parts[k];
      for (let i = runs.from[k]; i < runs.to[k]; i++) {
        const before = passes(p.oldValues[i]);
        const after = passes(p.newValues[i]);
        rows++;
        if (before && !after) b++;
        if (!before && after) c++;
      }
    }
    sums.add(rows, b, c);
  }
  return sums.result();
}

/**
 * The per-task flip counts from paired pass/fail rows (same index is the same row; pass: true or 1,
 * fail: false or 0) and their task ids, in the order tasks first appear.
 */
export function taskFlipsOf(
  oldPass: ArrayLike<boolean | number>,
  newPass: ArrayLike<boolean | number>,
  clusters: ArrayLike<string | number>,
): TaskFlips[] {
  if (oldPass.length !== newPass.length || oldPass.length !== clusters.length) {
    throw new RangeError('clustered McNemar: old, new and task ids differ in length');
  }
  const byTask = new Map<string | number, TaskFlips>();
  for (let i = 0; i < oldPass.length; i++) {
    let t = byTask.get(clusters[i]);
    if (!t) byTask.set(clusters[i], (t = { rows: 0, pf: 0, fp: 0 }));
    t.rows++;
    if (oldPass[i] && !newPass[i]) t.pf++;
    if (!oldPass[i] && newPass[i]) t.fp++;
  }
  return [...byTask.values()];
}
