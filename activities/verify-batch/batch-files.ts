/** A batch's files in the work directory, and publishing them when the batch ends. */
import { join } from 'node:path';
import { encodePaired } from '../../src/contract/paired-wire.js';
import type { BatchResult } from '../../src/contract/run-spec.js';
import { publishFile, writeFileAtomic } from '../../src/io/atomic-file.js';
import { rejudgeListPath, type RejudgeList } from '../../src/planning/rejudge-list.js';
import type { Checkpoint } from './checkpoint.js';
import { pairedUnits } from './paired-units.js';
import type { VerifyBatchRequest } from './request.js';

/** `r<round>-b<batch>`, or `<tag>-b<batch>` for a re-verification of saved rows (never read as a round's). */
function batchName(req: Pick<VerifyBatchRequest, 'round' | 'batch' | 'tag'>): string {
  return `${req.tag ?? `r${req.round}`}-b${req.batch}`;
}

/** The batch's files in the work directory: its published parts and result, and the parts being written. */
export function batchFiles(req: VerifyBatchRequest) {
  const name = batchName(req);
  const mainPart = join(req.workDir, `${name}.main.part`);
  const sidecarPart = join(req.workDir, `${name}.sidecar.part`);
  return {
    mainPart,
    sidecarPart,
    mainPartial: `${mainPart}.partial`,
    sidecarPartial: `${sidecarPart}.partial`,
    result: join(req.workDir, `${name}.json`),
    /** The checkpoint of a launch that spent its allowance (held.ts). */
    held: join(req.workDir, `${name}.held.json`),
  };
}

/** Publishes the batch's parts, its list of judge failures and its result (counts only). */
export async function publish(
  req: VerifyBatchRequest,
  files: ReturnType<typeof batchFiles>,
  checkpoint: Checkpoint,
  unfinished: number,
  carried = 0,
): Promise<BatchResult> {
  const result: BatchResult = {
    batch: req.batch,
    mainPart: files.mainPart,
    sidecarPart: files.sidecarPart,
    ...checkpoint.counts,
    requestsUsed: checkpoint.requestsUsed ?? 0,
    ...(req.launchLimit === undefined ? {} : { launchLimit: req.launchLimit }),
    audit: checkpoint.audit,
    ...(unfinished > 0 ? { unfinished } : {}),
    ...(carried > 0 ? { carried } : {}),
    ...(checkpoint.paired ? { paired: encodePaired(pairedUnits(checkpoint.paired, req.plan.agents), req.round) } : {}),
    ...(checkpoint.lastSelectedAt === undefined ? {} : { selectedAgoMs: Math.max(0, Date.now() - checkpoint.lastSelectedAt) }),
  };
  // The parts and the list are independent (their fsyncs overlap); the result comes last: it says all are published.
  await Promise.all([
    publishFile(files.mainPartial, files.mainPart),
    publishFile(files.sidecarPartial, files.sidecarPart),
    writeFileAtomic(
      req.tag === undefined ? rejudgeListPath(req.workDir, req.round, req.batch) : join(req.workDir, `${batchName(req)}.rejudge.json`),
      JSON.stringify(rejudgeListOf(checkpoint)),
    ),
  ]);
  await writeFileAtomic(files.result, JSON.stringify(result));
  return result;
}

/** The batch's rejudge list (src/planning/rejudge-list.ts): its selected rows and what each left in the sidecar. */
export function rejudgeListOf(cp: Checkpoint): RejudgeList {
  return { rows: cp.judgeFailedRows, withdrawn: cp.withdrawnRows ?? [], terminal: cp.terminalRows ?? [] };
}

/**
 * Test hook: `REVERIFY_TEST_KILL_BATCH_AT=published` makes the worker SIGKILL itself once a
 * re-judgment batch has published its verdicts and before the workflow commits them
 * (test/integration/rejudge-settlement.test.ts); unset in real runs.
 */
export function killAfterPublishing(req: VerifyBatchRequest): void {
  if (req.operation !== undefined && process.env.REVERIFY_TEST_KILL_BATCH_AT === 'published') process.kill(process.pid, 'SIGKILL');
}
