/**
 * Before the first batch of a run that keeps a live estimate: the units the estimate samples
 * (runs of consecutive plan rows of one agent and task, src/stats/run-estimate.ts) counted per
 * agent, with their rows, the rows of the largest, and the sum of the old rewards (the old mean is
 * exact: every old reward is in --rollouts). One pass over the plan and the planned source rows, each proven by its digest.
 */
import type { PlanSummary } from '../src/contract/plan-summary.js';
import { inUnitRange, pairedFacts } from '../src/contract/paired-facts.js';
import { readRangesBytes } from '../src/io/read-ranges.js';
import { readPlanRange } from '../src/planning/plan-file.js';
import type { PlannedUnits } from '../src/stats/run-estimate.js';
import { whileHeartbeating } from './heartbeating.js';

/** Plan records read at once. */
const CHUNK = 8192;

export interface CountPairedUnitsRequest {
  plan: Pick<PlanSummary, 'planPath' | 'recordBytes' | 'sourcePath' | 'agents' | 'rows'>;
}

/** Units per agent name. */
export async function countPairedUnits(req: CountPairedUnitsRequest): Promise<Record<string, PlannedUnits>> {
  let at = 0;
  return whileHeartbeating(
    () => countUnits(req, (n) => (at = n)),
    () => ({ rows: at, of: req.plan.rows }),
  );
}

async function countUnits(req: CountPairedUnitsRequest, progress: (rows: number) => void): Promise<Record<string, PlannedUnits>> {
  const { plan } = req;
  const out: Record<string, PlannedUnits> = {};
  let unit: { agent: string; task: string; rows: number } | null = null;
  const close = () => {
    if (unit) out[unit.agent].maxRows = Math.max(out[unit.agent].maxRows, unit.rows);
  };
  for (let from = 0; from < plan.rows; from += CHUNK) {
    const records = await readPlanRange(plan.planPath, from, Math.min(plan.rows, from + CHUNK), plan.recordBytes);
    const ranges = records.map((r) => ({ offset: r.sourceOffset, length: r.sourceLength, digest: r.sourceDigest }));
    const lines = await readRangesBytes(plan.sourcePath, ranges);
    records.forEach((r, k) => {
      const agent = plan.agents[r.agent];
      const { task, reward } = pairedFacts(lines[k].toString('utf8'));
      const a = (out[agent] ??= { units: 0, rows: 0, maxRows: 0, oldSum: 0, invalid: 0 });
      if (!inUnitRange(reward)) a.invalid++;
      if (unit === null || unit.agent !== agent || unit.task !== task) {
        close();
        unit = { agent, task, rows: 0 };
        a.units++;
      }
      unit.rows++;
      a.rows++;
      if (inUnitRange(reward)) a.oldSum += reward;
    });
    progress(from + records.length);
  }
  close();
  return out;
}
