/**
 * The plan's last pass: the verdicts in file order — apply the limit, stop at the first error,
 * count what is skipped, and write the rows to verify as the plan file.
 */
import { InputError } from '../../src/contract/errors.js';
import { PlanWriter } from '../../src/planning/plan-file.js';
import { Verdict, type VerdictFile } from '../../src/planning/plan-verdicts.js';

/** What the pass wrote and skipped. */
export interface PlanRecords {
  /** Rows written to the plan. */
  rows: number;
  /** Source rows within the limit (yielded), of them repeats of an earlier key, and the skips of --resume. */
  yielded: number;
  duplicates: number;
  skipped: { done: number; terminal: number; maxed: number };
  rowsPerAgent: Record<string, number>;
}

/**
 * Writes the planned rows of ordinals `[0, ordinals)` to `path`, the first `limit` yielded rows;
 * `stopMessage(ordinal)` is the message of the error that stops the run at an `Error` verdict.
 */
export async function writePlanRecords(
  path: string,
  verdicts: VerdictFile,
  ordinals: number,
  { limit, agents }: { limit: number | null; agents: readonly string[] },
  stopMessage: (ordinal: number) => Promise<string>,
): Promise<PlanRecords> {
  const writer = await PlanWriter.create(path);
  const out: PlanRecords = { rows: 0, yielded: 0, duplicates: 0, skipped: { done: 0, terminal: 0, maxed: 0 }, rowsPerAgent: {} };
  const { skipped, rowsPerAgent } = out;
  try {
    for (const { ordinal, verdict, plan } of verdicts.inOrder(ordinals)) {
      if (limit !== null && out.yielded >= limit) break;
      if (verdict === Verdict.NotYielded) continue;
      if (verdict === Verdict.Error) throw new InputError(await stopMessage(ordinal));
      out.yielded++;
      if (verdict === Verdict.Duplicate) out.duplicates++;
      else if (verdict === Verdict.SkipDone) skipped.done++;
      else if (verdict === Verdict.SkipTerminal) skipped.terminal++;
      else if (verdict === Verdict.SkipMaxed) skipped.maxed++;
      else {
        await writer.add(plan);
        const agent = agents[plan.agent];
        rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
      }
    }
  } finally {
    await writer.close();
  }
  out.rows = writer.count;
  return out;
}
