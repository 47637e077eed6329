import { open, readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { lineKeyId } from '../src/contract/row-key.js';
import type { PlanSummary } from '../src/contract/run-spec.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { readSidecarAttempts } from '../src/io/output-cache.js';
import { PlanWriter, withPlanReader } from '../src/io/plan-file.js';
import { readRange } from '../src/io/read-range.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

/** Name of the file where a batch lists the plan rows whose verdict was `judge_failed`. */
export function rejudgeListPath(workDir: string, round: number, batch: number): string {
  return join(workDir, `r${round}-b${batch}.rejudge.json`);
}

export interface RoundRequest {
  workDir: string;
  /** The round that just finished, and its plan. */
  round: number;
  plan: PlanSummary;
  sidecar: string;
  maxAttempts: number;
}

/**
 * Re-judgment: plans round `round + 1` from the rows that judge-failed in `round`, keeping only
 * keys that may still be attempted — fewer sidecar rows (failed attempts) than the cap and no
 * terminal one — exactly what a NeMo Gym `--resume` would retry. Returns the new plan (0 rows: done).
 */
export function planRound() {
  return (req: RoundRequest): Promise<PlanSummary> =>
    failFastOnUserError(() => whileHeartbeating(async () => {
      const prefix = `r${req.round}-b`;
      const lists = (await readdir(req.workDir)).filter((f) => f.startsWith(prefix) && f.endsWith('.rejudge.json'));
      const rows: number[] = [];
      for (const f of lists) rows.push(...(JSON.parse(await readFile(join(req.workDir, f), 'utf8')) as number[]));
      rows.sort((a, b) => a - b);
      const { attempts, terminal } = await readSidecarAttempts(req.sidecar, { repairTruncated: true });
      const planPath = join(req.workDir, `plan-r${req.round + 1}.bin`);
      const writer = await PlanWriter.create(`${planPath}.tmp`);
      const rowsPerAgent: Record<string, number> = {};
      const source = await open(req.plan.sourcePath, 'r');
      try {
        await withPlanReader(req.plan.planPath, async (read) => {
          for (const i of rows) {
            const rec = await read(i);
            const id = lineKeyId(await readRange(source, rec.sourceOffset, rec.sourceLength));
            if (id === null || terminal.has(id) || (attempts.get(id) ?? 0) >= req.maxAttempts) continue;
            await writer.add(rec);
            const agent = req.plan.agents[rec.agent];
            rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
          }
        });
      } finally {
        await source.close();
        await writer.close();
      }
      await rename(`${planPath}.tmp`, planPath);
      const summary: PlanSummary = { ...req.plan, planPath, rows: writer.count, rowsPerAgent };
      await writeFileAtomic(join(req.workDir, `plan-r${req.round + 1}.json`), JSON.stringify(summary));
      return summary;
    }));
}
