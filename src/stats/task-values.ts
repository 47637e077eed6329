/**
 * Per-task values for the live confidence sequence (wor-cs.ts), and the worst case of values not
 * known yet (judge failures not yet re-judged: "shown as the worst-case interval, not dropped").
 *
 * The sampling unit is a task (all rollouts of a task are verified together, tasks in a random
 * order), so the sequence is fed one value per task. Two estimands:
 * - equal task weight: the value is the task's mean (of rewards, of new − old, of flips), in the
 *   rewards' range [a, b]; the CS is for the mean over tasks of these means. With the same number
 *   of rollouts in every task (the usual case) this is the mean over rows.
 * - row weight (tasks of different sizes): the value is the task's SUM times N/R (N tasks, R rows
 *   planned), whose mean over the N tasks is exactly the mean over the R rows; its range is wider,
 *   [min(a·nMin, a·nMax), max(b·nMin, b·nMax)]·N/R, so the interval widens with nMax/(R/N).
 * Worst case: a mean of n known values (sum s) and k unknown values in [a, b] lies in
 * [(s + k·a)/(n + k), (s + k·b)/(n + k)] whatever the unknowns are; an interval for the mean of the
 * n known widens the same way. These are sure bounds (no probability), from the bounds alone.
 */

/** A closed interval. */
export interface Bounds {
  lo: number;
  hi: number;
}

/** The range of the mean of `known` values summing to `knownSum` and `unknown` values in [a, b]. */
export function meanWithUnknown(knownSum: number, known: number, unknown: number, a: number, b: number): Bounds {
  const n = known + unknown;
  if (n === 0) return { lo: a, hi: b };
  return { lo: (knownSum + unknown * a) / n, hi: (knownSum + unknown * b) / n };
}

/**
 * Widens `iv`, an interval for the mean of `known` values, into one for the mean of those and
 * `unknown` more in [a, b]: every unknown at a for the low end, at b for the high end.
 */
export function widenForUnknown(iv: Bounds, known: number, unknown: number, a: number, b: number): Bounds {
  const n = known + unknown;
  if (n === 0) return { lo: a, hi: b };
  return { lo: (known * iv.lo + unknown * a) / n, hi: (known * iv.hi + unknown * b) / n };
}

/** The plan's shape for the row-weighted estimand: tasks, rows, and the fewest and most rows in a task. */
export interface PlanShape {
  tasks: number;
  rows: number;
  minRows: number;
  maxRows: number;
}

/** A task's row-weighted value: its sum times N/R (the mean over tasks of these is the mean over rows). */
export function rowWeightedValue(taskSum: number, plan: PlanShape): number {
  return (taskSum * plan.tasks) / plan.rows;
}

/** The range of row-weighted task values when each row lies in [a, b]. */
export function rowWeightedRange(a: number, b: number, plan: PlanShape): Bounds {
  const scale = plan.tasks / plan.rows;
  return {
    lo: Math.min(a * plan.minRows, a * plan.maxRows) * scale,
    hi: Math.max(b * plan.minRows, b * plan.maxRows) * scale,
  };
}

/**
 * The range of a task's value when `unknown` of its rows are not known yet: its known rows sum to
 * `knownSum`, each unknown row lies in [a, b]; `rows` is the task's row count. Equal task weight
 * gives the range of the task's mean; pass `plan` for the row-weighted value's range.
 */
export function taskValueRange(knownSum: number, rows: number, unknown: number, a: number, b: number, plan?: PlanShape): Bounds {
  const lo = knownSum + unknown * a;
  const hi = knownSum + unknown * b;
  if (plan) return { lo: rowWeightedValue(lo, plan), hi: rowWeightedValue(hi, plan) };
  return { lo: lo / rows, hi: hi / rows };
}
