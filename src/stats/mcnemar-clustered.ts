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
import { ClusterSlots } from './cluster-slots.js';
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
  return mcnemarOver(
    tasks.length,
    (k) => tasks[k].rows,
    (k) => tasks[k].pf,
    (k) => tasks[k].fp,
  );
}

/** The test over `count` tasks, task k's counts given by index (in the order the tasks first appeared). */
function mcnemarOver(
  count: number,
  rowsAt: (k: number) => number,
  pfAt: (k: number) => number,
  fpAt: (k: number) => number,
): ClusteredMcNemar {
  let sum = 0;
  let squares = 0;
  let pf = 0;
  let fp = 0;
  for (let k = 0; k < count; k++) {
    const [rows, b, c] = [rowsAt(k), pfAt(k), fpAt(k)];
    if (!(rows > 0) || b + c > rows) throw new RangeError(`clustered McNemar: a task with ${rows} rows cannot have ${b} + ${c} flips`);
    const d = (b - c) / rows;
    sum += d;
    squares += d * d;
    pf += b;
    fp += c;
  }
  if (squares === 0) return { statistic: null, pValue: null, pf, fp, tasks: count };
  const statistic = (sum * sum) / squares;
  return { statistic, pValue: chiSquare1UpperTail(statistic), pf, fp, tasks: count };
}

/**
 * `clusteredMcNemar(taskFlipsOf(oldPass, newPass, clusters))`, the same numbers, without an object
 * per task: each task's counts sit in a slot of three typed arrays (cluster-slots.ts).
 */
export function clusteredMcNemarOf(
  oldPass: ArrayLike<boolean | number>,
  newPass: ArrayLike<boolean | number>,
  clusters: ArrayLike<string | number>,
): ClusteredMcNemar {
  if (oldPass.length !== newPass.length || oldPass.length !== clusters.length) {
    throw new RangeError('clustered McNemar: old, new and task ids differ in length');
  }
  const slots = new ClusterSlots(clusters);
  const [rows, pf, fp] = [0, 1, 2].map(() => new Uint32Array(slots.capacity));
  for (let i = 0; i < oldPass.length; i++) {
    const s = slots.slot(clusters[i]);
    rows[s]++;
    if (oldPass[i] && !newPass[i]) pf[s]++;
    if (!oldPass[i] && newPass[i]) fp[s]++;
  }
  return mcnemarOver(
    slots.size,
    (k) => rows[k],
    (k) => pf[k],
    (k) => fp[k],
  );
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
