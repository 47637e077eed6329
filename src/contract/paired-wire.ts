/**
 * A batch's paired units as its result carries them into the workflow history (`BatchResult.paired`).
 * As objects with their names, the units were ≈ 130 bytes a row (a unit per row when each task has
 * one rollout per agent), 95 % of a 10^5-row run's history (bench/README.md "scale.ts"); as one
 * array of numbers each, ≈ 18, still most of a batch's history and what set how often a run
 * continues as new. Now a unit's numbers are written once per distinct value (with 0/1 rewards a
 * batch has a few dozen), and each unit is its value's index in base-64 digits: ≈ 1 byte a unit.
 *
 * Where the workflow reads a unit's task (src/stats/run-estimate.ts, rejudged-units.ts): the first
 * unit of a batch may go on from the previous batch's last, and the last may go on into the next
 * (both compared by agent and task); a unit with rows not known or invalid is kept by agent and
 * task for re-judgment; every unit of a re-judgment round settles one kept by agent and task. Any
 * other unit enters and closes within its batch, so its task is never read: it travels as ''.
 * Pure and deterministic (activities encode, the workflow decodes).
 */
import type { PairedUnit } from './batch-result.js';

/** A unit's numbers: [agent (index into `agents`), rows, known, oldSum, newSum, up, down, invalid]. */
export type PairedNumbers = [number, number, number, number, number, number, number, number];

export interface PairedWire {
  agents: string[];
  /** The distinct units' numbers, in the order of their first unit. */
  values: PairedNumbers[];
  /** Each unit's index into `values` in `width` base-64 digits (`DIGITS`), in unit order. */
  order: string;
  width: number;
  /** The tasks that are read (see above): [unit index, task], in unit order. */
  tasks: Array<[number, string]>;
}

/** URL-safe base-64 digits: plain in JSON. */
const DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Whether the workflow reads unit `i` of `n` by its task (see above). */
function taskRead(u: PairedUnit, i: number, n: number, rejudgment: boolean): boolean {
  return rejudgment || i === 0 || i === n - 1 || u.known < u.rows || u.invalid > 0;
}

/** Digits needed for an index below `n` (at least 1). */
function widthFor(n: number): number {
  let width = 1;
  for (let max = 64; max < n; max *= 64) width++;
  return width;
}

/** The units of a batch of round `round` (0: the first pass) as its result carries them. */
export function encodePaired(units: readonly PairedUnit[], round: number): PairedWire {
  const agents: string[] = [];
  const agentIndex = new Map<string, number>();
  const values: PairedNumbers[] = [];
  const valueIndex = new Map<string, number>();
  const indices: number[] = [];
  const tasks: Array<[number, string]> = [];
  units.forEach((u, i) => {
    let a = agentIndex.get(u.agent);
    if (a === undefined) {
      a = agents.push(u.agent) - 1;
      agentIndex.set(u.agent, a);
    }
    const numbers: PairedNumbers = [a, u.rows, u.known, u.oldSum, u.newSum, u.up, u.down, u.invalid];
    const key = numbers.join(',');
    let v = valueIndex.get(key);
    if (v === undefined) {
      v = values.push(numbers) - 1;
      valueIndex.set(key, v);
    }
    indices.push(v);
    if (taskRead(u, i, units.length, round > 0)) tasks.push([i, u.task]);
  });
  const width = widthFor(values.length);
  let order = '';
  for (const v of indices) {
    let digits = '';
    for (let k = 0, rest = v; k < width; k++, rest = Math.floor(rest / 64)) digits = DIGITS[rest % 64] + digits;
    order += digits;
  }
  return { agents, values, order, width, tasks };
}

/**
 * The units a result carries (absent: none). Plain loops and no spread: this runs in the workflow
 * sandbox, where each global read is slow (src/stats/wor-cs.ts).
 */
export function decodePaired(wire: PairedWire | undefined): PairedUnit[] {
  const units: PairedUnit[] = [];
  if (!wire) return units;
  const { values, order, width, tasks, agents } = wire;
  let next = 0;
  for (let i = 0, at = 0; at < order.length; i++, at += width) {
    let v = 0;
    for (let k = 0; k < width; k++) v = v * 64 + DIGITS.indexOf(order[at + k]);
    const t = values[v];
    let task = '';
    if (next < tasks.length && tasks[next][0] === i) task = tasks[next++][1];
    units.push({ agent: agents[t[0]], task, rows: t[1], known: t[2], oldSum: t[3], newSum: t[4], up: t[5], down: t[6], invalid: t[7] });
  }
  return units;
}
