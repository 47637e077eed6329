import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../src/contract/errors.js';
import { plannedRowChanged } from '../src/planning/changed-input.js';
import type { PlanSummary } from '../src/contract/run-spec.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { lineDigest } from '../src/io/line-digest.js';
import { attemptsAfter, attemptsOfWord, attemptsWord, readAttemptWords } from '../src/planning/plan-attempts.js';
import { PlanFilesWriter, planPathsOf, publishPlanFiles, tmpPlanPaths, type PlanPaths } from '../src/planning/plan-files.js';
import { checkPlanLayout, decodePlanRecord, encodedAgent, type PlanRecord } from '../src/planning/plan-file.js';
import { readRejudgeList, rejudgeListPath, sidecarLeftBy, type RejudgeList } from '../src/planning/rejudge-list.js';
import { readRangeBytes, ShortReadError } from '../src/io/read-range.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface RoundRequest {
  workDir: string;
  /** The round whose committed batches `batches` selected the rows. */
  round: number;
  /** Committed batches of one segment (their numbers across the segments, in any order). */
  batches: number[];
  /** The first batch number of the segment the plan becomes (names its files: `plan-r{round + 1}-s{segment}`). */
  segment: number;
  /** The plan of those batches (their lists hold its row indices), with its attempts file. */
  plan: PlanSummary;
  maxAttempts: number;
}

/** A plan row's source line, proven to be the planned bytes (else the run stops: `inputChanged`). */
async function provePlannedSource(plan: PlanSummary, source: FileHandle, rec: PlanRecord): Promise<void> {
  const bytes = await readRangeBytes(source, rec.sourceOffset, rec.sourceLength).catch((err: unknown) => {
    if (err instanceof ShortReadError) return null;
    throw err;
  });
  if (bytes === null || lineDigest(bytes) !== rec.sourceDigest) {
    throw await plannedRowChanged(plan, plan.sourcePath, `line ${rec.sourceLine}`);
  }
}

/** The plan's attempts file; a plan of an earlier version has none, and its rows cannot be planned again. */
function attemptsFileOf(plan: PlanSummary): string {
  if (plan.attemptsPath !== undefined) return plan.attemptsPath;
  throw new ConfigError(
    "this run's plan was written by another version of reverify (without its rows' attempts): its judge failures cannot " +
      'be planned again. End it with `reverify cancel -o <output>`, then run the same command with --resume: it plans ' +
      'again from the files as they are now',
  );
}

/** The plan's files, open for reading. */
interface OpenPlan {
  records: FileHandle;
  attempts: FileHandle;
  source: FileHandle;
  recordBytes: number;
}

async function openPlan(plan: PlanSummary): Promise<OpenPlan> {
  const recordBytes = checkPlanLayout(plan.recordBytes);
  const opened: FileHandle[] = [];
  try {
    for (const path of [plan.planPath, attemptsFileOf(plan), plan.sourcePath]) opened.push(await open(path, 'r'));
  } catch (err) {
    for (const fh of opened) await fh.close();
    throw err;
  }
  const [records, attempts, source] = opened;
  return { records, attempts, source, recordBytes };
}

/** Where the kept rows go: the new plan's files, and its rows per agent in first-written order. */
interface Kept {
  writer: PlanFilesWriter;
  rowsPerAgent: Record<string, number>;
}

/**
 * One committed batch's listed rows (`rows`: its list's, sorted): its part of the plan and of the
 * plan's attempts read at once (a batch covers a contiguous range of the plan), each row's source
 * line proven, and the rows that may still be attempted appended to `kept` with their attempts
 * after this one.
 */
async function keepRetryable(req: RoundRequest, files: OpenPlan, list: RejudgeList, rows: number[], kept: Kept): Promise<void> {
  const left = sidecarLeftBy(list);
  const [from, to] = [rows[0], rows[rows.length - 1] + 1];
  const { recordBytes } = files;
  const records = await readRangeBytes(files.records, from * recordBytes, (to - from) * recordBytes);
  const words = await readAttemptWords(files.attempts, from, to);
  for (const i of rows) {
    const at = (i - from) * recordBytes;
    await provePlannedSource(req.plan, files.source, decodePlanRecord(records, at, recordBytes));
    const now = attemptsAfter(attemptsOfWord(words[i - from]), left(i));
    if (now.terminal || now.count >= req.maxAttempts) continue;
    const adding = kept.writer.addEncoded(records, at, attemptsWord(now));
    if (adding) await adding;
    const agent = req.plan.agents[encodedAgent(records, at)];
    kept.rowsPerAgent[agent] = (kept.rowsPerAgent[agent] ?? 0) + 1;
  }
}

/**
 * Writes round `req.round + 1`'s plan files `paths` (see `planRound`): the kept rows in plan index
 * order, with their attempts. The batches' lists are read one at a time, in batch order, each
 * sorted; a segment's batches cover consecutive ranges of its plan in that order, so the rows come
 * out in plan order with no sort, and memory holds one batch's rows. Returns the rows written per
 * agent, in first-written order.
 */
export async function writeRoundPlan(req: RoundRequest, paths: PlanPaths): Promise<{ rows: number; rowsPerAgent: Record<string, number> }> {
  const files = await openPlan(req.plan);
  try {
    const kept: Kept = { writer: await PlanFilesWriter.create(paths, files.recordBytes), rowsPerAgent: {} };
    try {
      let last = -1;
      for (const batch of [...req.batches].sort((a, b) => a - b)) {
        const list = await readRejudgeList(rejudgeListPath(req.workDir, req.round, batch));
        const rows = [...list.rows].sort((a, b) => a - b);
        if (rows.length === 0) continue;
        if (rows.some((row, k) => row <= (k === 0 ? last : rows[k - 1]))) {
          throw new Error(`the rejudge list of batch ${batch} of round ${req.round + 1} repeats a row or lists one of an earlier batch`);
        }
        await keepRetryable(req, files, list, rows, kept);
        last = rows[rows.length - 1];
      }
      return { rows: kept.writer.count, rowsPerAgent: kept.rowsPerAgent };
    } finally {
      await kept.writer.close();
    }
  } finally {
    for (const fh of [files.records, files.attempts, files.source]) await fh.close();
  }
}

/**
 * Re-judgment: plans round `round + 1` from the rows that judge-failed in `round`'s committed
 * batches `batches` (with the retry rules also `judge_invalid` and retried timeouts), keeping only
 * keys that may still be attempted — fewer failed attempts than the cap and no terminal one,
 * terminal as the rules say — exactly what a NeMo Gym `--resume` with the same flags would retry.
 * No sidecar is read: a row's attempts are those its plan carries (the first plan counted its key's
 * sidecar rows; keys are unique in a plan) plus what the attempt its batch committed left there,
 * which the batch's list says (src/planning/rejudge-list.ts); nothing else writes a key's sidecar
 * rows during the run. Returns the new plan (0 rows: done).
 */
export function planRound(req: RoundRequest): Promise<PlanSummary> {
  return failFastOnUserError(() =>
    whileHeartbeating(async () => {
      const name = `plan-r${req.round + 1}-s${req.segment}`;
      const paths = planPathsOf(join(req.workDir, `${name}.bin`));
      const { rows, rowsPerAgent } = await writeRoundPlan(req, tmpPlanPaths(paths));
      await publishPlanFiles(paths);
      const recordBytes = checkPlanLayout(req.plan.recordBytes);
      const summary: PlanSummary = { ...req.plan, planPath: paths.plan, attemptsPath: paths.attempts, rows, rowsPerAgent, recordBytes };
      await writeFileAtomic(join(req.workDir, `${name}.json`), JSON.stringify(summary));
      return summary;
    }),
  );
}
