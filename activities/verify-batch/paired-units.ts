/**
 * A batch's rows as paired old/new values per task, for the run's live estimate: each row answered
 * notes its task, old and new reward in the checkpoint (so a retried attempt keeps them), and the
 * result sums them per run of consecutive rows of one agent and task (`PairedUnit`), in plan order.
 */
import { inUnitRange } from '../../src/contract/paired-facts.js';
import type { PairedUnit } from '../../src/contract/run-spec.js';
import { PASS_THRESHOLD } from '../../src/report/verdict-join.js';

/** One answered row: its agent (plan index), task, old reward and new reward (null: no new reward in the main output). */
export type PairedRow = [agent: number, task: string, old: number | null, reward: number | null];

/** The rows noted, by their index in the batch, summed per task in row order. */
export function pairedUnits(rows: Record<number, PairedRow>, agents: readonly string[]): PairedUnit[] {
  const units: PairedUnit[] = [];
  let last: PairedUnit | null = null;
  for (const i of Object.keys(rows)
    .map(Number)
    .sort((a, b) => a - b)) {
    const [agentIndex, task, old, reward] = rows[i];
    const agent = agents[agentIndex];
    if (last === null || last.agent !== agent || last.task !== task) {
      last = { agent, task, rows: 0, known: 0, oldSum: 0, newSum: 0, up: 0, down: 0, invalid: 0 };
      units.push(last);
    }
    addRow(last, old, reward);
  }
  return units;
}

function addRow(u: PairedUnit, old: number | null, reward: number | null): void {
  u.rows++;
  if (!inUnitRange(old) || (reward !== null && !inUnitRange(reward))) {
    u.invalid++;
    return;
  }
  u.oldSum += old;
  if (reward === null) return;
  u.known++;
  u.newSum += reward;
  const was = old >= PASS_THRESHOLD;
  const is = reward >= PASS_THRESHOLD;
  if (!was && is) u.up++;
  if (was && !is) u.down++;
}
