/**
 * A batch's rejudge list (`r{round}-b{batch}.rejudge.json` in the work directory): the plan rows
 * its verdicts selected for the next round — its judge failures (with the retry rules also
 * `judge_invalid` and retried timeouts) and its withdrawn re-judgments — and what each attempt left
 * in the sidecar once the batch is committed: one failure row, except the rows listed `withdrawn`
 * (answered without a grade: nothing written); `terminal` lists the rows whose failure row stops
 * their key under the retry rules. That is all a re-judgment plan (activities/plan-round.ts) needs
 * to carry each row's attempts on without reading the sidecar.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import type { SidecarLeft } from './plan-attempts.js';

export interface RejudgeList {
  /** Plan indices, in the order the rows were answered. */
  rows: number[];
  withdrawn: number[];
  terminal: number[];
}

/** The list of batch `batch` of round `round`. */
export function rejudgeListPath(workDir: string, round: number, batch: number): string {
  return join(workDir, `r${round}-b${batch}.rejudge.json`);
}

/** A batch's list; a batch without one selected no row. Another version's list (a bare array) is refused. */
export async function readRejudgeList(path: string): Promise<RejudgeList> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { rows: [], withdrawn: [], terminal: [] };
    throw err;
  }
  const list = JSON.parse(text) as Partial<RejudgeList>;
  if (!Array.isArray(list.rows) || !Array.isArray(list.withdrawn) || !Array.isArray(list.terminal)) {
    throw new ConfigError(
      `'${path}' was written by another version of reverify (it does not say what each attempt left in the sidecar): ` +
        'end the run with `reverify cancel -o <output>`, then run the same command with --resume',
    );
  }
  return list as RejudgeList;
}

/** What each listed row's attempt left in the sidecar. */
export function sidecarLeftBy(list: RejudgeList): (row: number) => SidecarLeft {
  const withdrawn = new Set(list.withdrawn);
  const terminal = new Set(list.terminal);
  return (row) => (withdrawn.has(row) ? 'none' : terminal.has(row) ? 'terminal' : 'row');
}
