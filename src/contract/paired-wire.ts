/**
 * A batch's paired units as its result carries them into the workflow history (`BatchResult.paired`):
 * one short array of numbers per unit instead of an object with its names, and the task only where
 * the workflow reads it. As objects, the units were ≈ 130 bytes a row (a unit per row when each task
 * has one rollout per agent), 95 % of a 10^5-row run's history (bench/README.md "scale.ts"); as
 * arrays ≈ 18.
 *
 * Where the workflow reads a unit's task (src/stats/run-estimate.ts, rejudged-units.ts): the first
 * unit of a batch may go on from the previous batch's last, and the last may go on into the next
 * (both compared by agent and task); a unit with rows not known or invalid is kept by agent and
 * task for re-judgment; every unit of a re-judgment round settles one kept by agent and task. Any
 * other unit enters and closes within its batch, so its task is never read: it travels as ''.
 * Pure and deterministic (activities encode, the workflow decodes).
 */
import type { PairedUnit } from './batch-result.js';

/** [agent (index into `agents`), rows, known, oldSum, newSum, up, down, invalid, task (only where read)]. */
export type PairedTuple =
  | [number, number, number, number, number, number, number, number]
  | [number, number, number, number, number, number, number, number, string];

export interface PairedWire {
  agents: string[];
  units: PairedTuple[];
}

/** Whether the workflow reads unit `i` of `n` by its task (see above). */
function taskRead(u: PairedUnit, i: number, n: number, rejudgment: boolean): boolean {
  return rejudgment || i === 0 || i === n - 1 || u.known < u.rows || u.invalid > 0;
}

/** The units of a batch of round `round` (0: the first pass) as its result carries them. */
export function encodePaired(units: readonly PairedUnit[], round: number): PairedWire {
  const agents: string[] = [];
  const index = new Map<string, number>();
  const tuples = units.map((u, i): PairedTuple => {
    let a = index.get(u.agent);
    if (a === undefined) {
      a = agents.push(u.agent) - 1;
      index.set(u.agent, a);
    }
    const numbers: [number, number, number, number, number, number, number, number] = [
      a,
      u.rows,
      u.known,
      u.oldSum,
      u.newSum,
      u.up,
      u.down,
      u.invalid,
    ];
    return taskRead(u, i, units.length, round > 0) ? [...numbers, u.task] : numbers;
  });
  return { agents, units: tuples };
}

/**
 * The units a result carries (absent: none). Plain loops and no spread: this runs in the workflow
 * sandbox, where each global read is slow (src/stats/wor-cs.ts).
 */
export function decodePaired(wire: PairedWire | undefined): PairedUnit[] {
  const units: PairedUnit[] = [];
  if (!wire) return units;
  for (const t of wire.units) {
    const task = t.length > 8 ? (t[8] as string) : '';
    units.push({
      agent: wire.agents[t[0]],
      task,
      rows: t[1],
      known: t[2],
      oldSum: t[3],
      newSum: t[4],
      up: t[5],
      down: t[6],
      invalid: t[7],
    });
  }
  return units;
}
