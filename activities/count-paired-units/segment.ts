/**
 * The count of a plan's units (count-paired-units.ts) over one range of plan rows, and the join of
 * two ranges' counts: a unit (a run of consecutive plan rows of one agent and task) that crosses
 * from one range into the next is one unit, not two. Every planned source row is read and proven by
 * its digest (`plannedSourceChunks`), and its task and old reward taken from its bytes
 * (`pairedFactsOfLine`).
 */
import type { PlanSummary } from '../../src/contract/plan-summary.js';
import { inUnitRange, pairedFactsOfLine } from '../../src/contract/paired-facts.js';
import { plannedSourceChunks } from '../../src/planning/planned-rows.js';
import type { PlannedUnits } from '../../src/stats/run-estimate.js';

/** The plan's files and what was recorded of them (`files`: named in the error when a row changed since). */
export type CountedPlan = Pick<PlanSummary, 'planPath' | 'recordBytes' | 'sourcePath' | 'agents' | 'rows' | 'files'>;

/** One unit as far as a range shows it. */
export interface RunOfRows {
  agent: string;
  task: string;
  rows: number;
}

/** The units of a range of plan rows per agent, and its first and last unit (null: no rows). */
export interface UnitSegment {
  perAgent: Record<string, PlannedUnits>;
  first: RunOfRows | null;
  last: RunOfRows | null;
}

const emptyUnits = (): PlannedUnits => ({ units: 0, rows: 0, maxRows: 0, oldSum: 0, invalid: 0 });

/** Counts the units of plan rows `[from, to)`; `progress(rows)` after each chunk read (rows of the range done). */
export async function countSegment(plan: CountedPlan, from: number, to: number, progress: (rows: number) => void): Promise<UnitSegment> {
  const seg: UnitSegment = { perAgent: {}, first: null, last: null };
  const close = () => {
    const u = seg.last;
    if (u) seg.perAgent[u.agent].maxRows = Math.max(seg.perAgent[u.agent].maxRows, u.rows);
  };
  for await (const { from: at, records, lines } of plannedSourceChunks(plan, from, to, true)) {
    for (let k = 0; k < records.length; k++) {
      const agent = plan.agents[records[k].agent];
      const { task, reward } = pairedFactsOfLine(lines[k]);
      const a = (seg.perAgent[agent] ??= emptyUnits());
      if (seg.last === null || seg.last.agent !== agent || seg.last.task !== task) {
        close();
        seg.last = { agent, task, rows: 0 };
        seg.first ??= seg.last;
        a.units++;
      }
      seg.last.rows++;
      a.rows++;
      if (inUnitRange(reward)) a.oldSum += reward;
      else a.invalid++;
    }
    progress(at + records.length - from);
  }
  close();
  return seg;
}

/** The count of two adjacent ranges (`a` before `b`) as one range's. */
export function joinSegments(a: UnitSegment, b: UnitSegment): UnitSegment {
  if (a.last === null) return b;
  if (b.first === null) return a;
  const perAgent: Record<string, PlannedUnits> = {};
  for (const seg of [a, b])
    for (const [agent, p] of Object.entries(seg.perAgent)) {
      const q = (perAgent[agent] ??= emptyUnits());
      q.units += p.units;
      q.rows += p.rows;
      q.maxRows = Math.max(q.maxRows, p.maxRows);
      q.oldSum += p.oldSum;
      q.invalid += p.invalid;
    }
  if (a.last.agent !== b.first.agent || a.last.task !== b.first.task) return { perAgent, first: a.first, last: b.last };
  // One unit goes on across the boundary: counted once, with the rows of both parts.
  const crossing: RunOfRows = { ...a.last, rows: a.last.rows + b.first.rows };
  const q = perAgent[crossing.agent];
  q.units--;
  q.maxRows = Math.max(q.maxRows, crossing.rows);
  return { perAgent, first: a.first === a.last ? crossing : a.first, last: b.last === b.first ? crossing : b.last };
}
