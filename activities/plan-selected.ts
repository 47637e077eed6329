/**
 * The plan of a re-verification of saved (scored) rows from their saved answers (`--noise-sample`,
 * `--rejudge-saved`; src/planning/selected-rows.ts): the selected rows of the output are the plan's
 * source rows (each has its `response`), joined by key with their materialized input rows, so a
 * `verifyBatch` sends exactly the `/verify` body `verifyRequest` builds from a rollout. Rows without
 * a `response` (nothing saved to judge again) are not selected. Also writes, beside the plan, each
 * selected row's key and first reward (the noise floor compares the second verdict with it).
 */
import { join } from 'node:path';
import { rename } from 'node:fs/promises';
import { noisePath } from '../src/contract/file-names.js';
import type { PlanSummary } from '../src/contract/run-spec.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { planRecord } from '../src/planning/key-facts.js';
import { PLAN_RECORD_BYTES, PlanWriter } from '../src/planning/plan-file.js';
import { scanSavedRows, type SavedScan } from '../src/planning/saved-selection.js';
import { keyIdText } from '../src/planning/selected-rows.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface SelectRequest extends SavedScan {
  workDir: string;
  /** Names the plan and the batches' files in the work directory (`noise`, `saved`). */
  tag: string;
}

export interface SelectedPlan {
  plan: PlanSummary;
  /** Where each selected row's key and first reward are (JSON `[key, reward][]`, plan order). */
  firstsPath: string;
  /** Keys `--rejudge-saved` asked for that no saved row holds (`T:R`). */
  missing: string[];
  /** Rows `--rejudge-saved` selected that cannot be re-verified, with why (`T:R (line N: why)`). */
  refused: string[];
  /** Selected rows left out: no input row of their key. */
  noInput: number;
  /** `noise`: the noise file the second verdicts go to (`<stem>_noise.jsonl`). */
  noisePath?: string;
}

/** Selects, joins and writes the plan (see the file comment). */
export async function writeSelectedPlan(req: SelectRequest): Promise<SelectedPlan> {
  const { selector, chosen, inputs, agents, servers } = await scanSavedRows(req);
  const planPath = join(req.workDir, `plan-${req.tag}.bin`);
  const writer = await PlanWriter.create(`${planPath}.tmp`, PLAN_RECORD_BYTES);
  const firsts: Array<[string, number | null]> = [];
  const rowsPerAgent: Record<string, number> = {};
  try {
    for (const c of chosen) {
      const input = inputs.get(c.key);
      if (input === undefined) continue;
      await writer.add(planRecord({ line: c.line, offset: c.offset, length: c.length, digest: c.digest }, input));
      firsts.push([c.key, c.reward]);
      const agent = agents[input.agent];
      rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
    }
  } finally {
    await writer.close();
  }
  await rename(`${planPath}.tmp`, planPath);
  const firstsPath = join(req.workDir, `${req.tag}-firsts.json`);
  await writeFileAtomic(firstsPath, JSON.stringify(firsts));
  const plan: PlanSummary = {
    planPath,
    recordBytes: PLAN_RECORD_BYTES,
    sourcePath: req.output,
    rows: writer.count,
    agents,
    servers,
    rowsPerAgent,
  };
  const noise = req.tag === 'noise' ? { noisePath: noisePath(req.output) } : {};
  const missing = selector.missing().map(keyIdText);
  const refused = selector.refused().map((c) => `${keyIdText(c.key)} (line ${c.line}: ${c.problem})`);
  return { plan, firstsPath, missing, refused, noInput: chosen.length - writer.count, ...noise };
}

/** The activity: see `writeSelectedPlan`. */
export function planSelected(req: SelectRequest): Promise<SelectedPlan> {
  return failFastOnUserError(() => whileHeartbeating(() => writeSelectedPlan(req)));
}
