/**
 * The plan phase's body (spec §4.5–§4.8): every line of the inputs and the source checked, joined
 * by key, and written as the plan. No activity context here: activities/plan-run.ts runs it in
 * the activity, and the plan made ahead (plan-ahead-thread.ts) on a thread that therefore loads
 * no Temporal SDK. Its passes are steps of their own: the facts about keys (key-facts-pass.ts),
 * the source rows (source-rows.ts), the key join (src/planning/plan-keys.ts decides each key) and
 * the plan file (plan-records-pass.ts).
 */
import { existsSync } from 'node:fs';
import { mkdir, open, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../../src/contract/errors.js';
import { sidecarPath } from '../../src/contract/file-names.js';
import { budgetExhausted, noMatchingInput, resumeSummary, skippingResume } from '../../src/contract/messages.js';
import { keyOf } from '../../src/contract/row-key.js';
import type { FileIdentity, OutputPaths, PlanSummary, RetryRules } from '../../src/contract/run-spec.js';
import type { RoutingTable } from '../../src/config/routing.js';
import { writeFileAtomic } from '../../src/io/atomic-file.js';
import { ExternalSorter, forEachGroup } from '../../src/io/external-sort.js';
import { compareKeyedRecords, keyedRecordCodec, type KeyedRecord } from '../../src/planning/keyed-records.js';
import { sameStamp } from '../../src/contract/file-stamp.js';
import { fileNow } from '../../src/io/file-identity.js';
import { PLAN_RECORD_BYTES, type PlanRecord } from '../../src/planning/plan-file.js';
import { attemptsWord, type RowAttempts } from '../../src/planning/plan-attempts.js';
import { planPathsOf, publishPlanFiles, tmpPlanPaths } from '../../src/planning/plan-files.js';
import { readRange } from '../../src/io/read-range.js';
import { decideKey, type JoinProblem } from '../../src/planning/plan-keys.js';
import { Names } from '../../src/planning/names.js';
import { Verdict, VerdictFile } from '../../src/planning/plan-verdicts.js';
import type { InputIdentity } from '../../src/contract/plan-summary.js';
import { ContentDigest } from '../../src/io/content-digest.js';
import { refuseOtherInputs } from '../../src/run-checks/input-identity.js';
import { addKeyFacts } from './key-facts-pass.js';
import { FirstAt } from './plan-lines.js';
import { writePlanRecords, type PlanRecords, type PlanRecordsOptions } from './plan-records-pass.js';
import { addSourceRows } from './source-rows.js';
import { planRank, type PlanOrder } from '../../src/planning/task-order.js';

/** With the retry rules: recovery also recovers `judge_invalid`; resume retries terminal timeouts. */
export interface PlanRequest extends RetryRules {
  inputsPath: string;
  rolloutsPath: string;
  workDir: string;
  routing: RoutingTable;
  limit: number | null;
  /** Recovery (spec §4.6): the source is the sidecar of --rollouts, filtered to judge failures. */
  judgeFailedOnly: boolean;
  /** Skip what the outputs already hold (spec §4.8). */
  resume: boolean;
  outputs: Pick<OutputPaths, 'output' | 'sidecar'>;
  /** True when the prepare phase will delete the outputs (`--overwrite` without resume/append). */
  outputsCleared: boolean;
  maxAttempts: number;
  repairTruncated: boolean;
  /** The plan's order (absent: the file's). */
  order?: PlanOrder;
  /** Records the key join holds in memory before it sorts them to disk (tests make it small). */
  sortMaxRecords?: number;
  /** Files at least this big are scanned on a second thread too (`ScanAhead`; tests make it small). */
  scanAheadMinBytes?: number;
  /** `--allow-unsafe`: a `--resume` with files other than the run's saved ones is not refused (src/run-checks/input-identity.ts). */
  allowUnsafe?: boolean;
}

/** What the plan phase found, and what to tell the user about it. */
export interface PlanOutcome extends PlanSummary {
  messages: string[];
}

/**
 * Plans `req` into `req.workDir` (`planRun` is its activity), in memory flat in the number of rows:
 * everything keyed — the materialized inputs (byte places; the last duplicate wins), the output's
 * and sidecar's keys (resume), --rollouts' keys (recovery) and the source rows (the rollouts, or in
 * recovery mode the judge failures of their sidecar) — is sorted by key on disk (`ExternalSorter`),
 * each key's group decides its source rows' verdicts (`decideKey`), and a last pass over the
 * verdicts in file order applies `limit`, stops at the first bad row, and writes the plan file.
 * Every line is validated here, so bad input stops the run with `file:line: reason` before anything
 * is written or sent. Returns counts only.
 */
export async function planInto(req: PlanRequest): Promise<PlanOutcome> {
  // A new run (a live one would have been attached to) owns the work directory: whatever an
  // earlier, failed or cancelled run left there (batch results, parts, plans) is stale.
  await freshWorkDir(req.workDir);
  try {
    return await writePlan(req);
  } catch (err) {
    // Bad input leaves nothing behind: no plan, and no work directory if it holds nothing else.
    const tmp = tmpPlanPaths(planPathsOf(join(req.workDir, 'plan.bin')));
    for (const path of [tmp.plan, tmp.attempts]) await rm(path, { force: true });
    await rmdir(req.workDir).catch(() => undefined);
    throw err;
  }
}

/** Empties the work directory (made if missing). */
export async function freshWorkDir(workDir: string): Promise<void> {
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
}

/** The key join's findings: the first row whose key stops the run, and the first repeated key. */
interface JoinFindings {
  problems: FirstAt<JoinProblem>;
  firstDuplicate: FirstAt<string>;
}

/** Decides every source row's verdict, one key's group at a time (`decideKey`). */
async function joinKeys(
  req: PlanRequest,
  sourcePath: string,
  sorter: ExternalSorter<KeyedRecord>,
  verdicts: VerdictFile,
): Promise<JoinFindings> {
  const found: JoinFindings = { problems: new FirstAt<JoinProblem>(), firstDuplicate: new FirstAt<string>() };
  const policy = { recovery: req.judgeFailedOnly, resume: req.resume, maxAttempts: req.maxAttempts };
  const order = req.order ?? { kind: 'file' };
  // Each planned row carries its rank in the plan's order (the plan is sorted by it at the end).
  let key = '';
  const sink = {
    verdict: (ordinal: number, verdict: Verdict, plan?: PlanRecord, attempts?: RowAttempts) =>
      verdicts.set(
        ordinal,
        verdict,
        plan,
        plan === undefined ? 0 : planRank(order, key, plan),
        attempts === undefined ? 0 : attemptsWord(attempts),
      ),
    problem: (ordinal: number, problem: JoinProblem) => found.problems.offer(ordinal, problem),
    duplicate: (ordinal: number, line: number, firstLine: number) =>
      found.firstDuplicate.offer(ordinal, `${sourcePath}:${line} repeats the key of line ${firstLine}`),
  };
  await forEachGroup(
    sorter.sortedChunks(),
    (r) => r.key,
    (group) => {
      key = group[0].key;
      decideKey(group, policy, sink);
    },
  );
  return found;
}

/** The files the plan's offsets point into, as they are before they are read (a missing file is reported by the read itself). */
async function plannedFiles(req: PlanRequest, sourcePath: string): Promise<FileIdentity[]> {
  const files: FileIdentity[] = [
    { path: sourcePath, ...(await fileNow(sourcePath))! },
    { path: req.inputsPath, ...(await fileNow(req.inputsPath))! },
  ];
  // Recovery: --rollouts' keys decided what is re-verified, and seeding copies its successes.
  if (req.judgeFailedOnly) files.push({ path: req.rolloutsPath, ...(await fileNow(req.rolloutsPath))! });
  return files;
}

/** Stops the run if a planned file changed while it was read. */
async function refuseChanged(files: readonly FileIdentity[]): Promise<void> {
  for (const f of files) {
    if (!sameStamp(f, await fileNow(f.path))) {
      throw new InputError(
        `'${f.path}' changed while the run was planning: wait until whatever writes it has finished, then run the same command again`,
      );
    }
  }
}

/** How the last pass writes the plan. */
function planRecordsOptions(req: PlanRequest, agents: readonly string[]): PlanRecordsOptions {
  const { limit, workDir, sortMaxRecords } = req;
  return { limit, agents, order: req.order ?? { kind: 'file' }, workDir, sortMaxRecords };
}

/** What to tell the user about the plan. */
function planMessages(req: PlanRequest, written: PlanRecords, firstDuplicate: string | undefined): string[] {
  const messages: string[] = [];
  const { duplicates, skipped } = written;
  if (duplicates > 0) {
    messages.push(
      `WARNING: skipped ${duplicates} source row(s) whose key appeared earlier in the file (the first is verified; ` +
        `first repeat: ${firstDuplicate}). NeMo Gym would verify and write each copy.`,
    );
  }
  // In recovery the output always exists when NeMo Gym reads the cache: seeding has created it.
  // Neither the output nor its sidecar exists: "Skipping resume_from_cache ...".
  const found = existsSync(req.outputs.output) || existsSync(req.outputs.sidecar);
  if (req.resume && !found && !req.judgeFailedOnly) messages.push(skippingResume());
  else if (req.resume) messages.push(resumeSummary({ total: written.yielded, ...skipped, remaining: written.rows }));
  if (skipped.maxed > 0) messages.push(budgetExhausted(skipped.maxed, req.maxAttempts, req.outputs.sidecar));
  return messages;
}

/** The source of the run: --rollouts, or in recovery the sidecar of --rollouts. */
function planSource(req: PlanRequest): string {
  const sourcePath = req.judgeFailedOnly ? sidecarPath(req.rolloutsPath) : req.rolloutsPath;
  if (req.judgeFailedOnly && !existsSync(sourcePath)) {
    throw new InputError(
      `No such file or directory: '${sourcePath}': --judge-failed-only re-verifies the judge failures in the sidecar of --rollouts`,
    );
  }
  return sourcePath;
}

async function writePlan(req: PlanRequest): Promise<PlanOutcome> {
  const names = { agents: new Names(), servers: new Names() };
  const sourcePath = planSource(req);
  const sorter = new ExternalSorter<KeyedRecord>({
    dir: req.workDir,
    name: 'plan-keys',
    compare: compareKeyedRecords,
    codec: keyedRecordCodec,
    maxRecords: req.sortMaxRecords,
  });
  const verdicts = new VerdictFile(join(req.workDir, 'plan.verdicts'));
  const files = await plannedFiles(req, sourcePath);
  try {
    const digests = { inputs: new ContentDigest(), source: new ContentDigest() };
    await addKeyFacts(req, sorter, names, digests.inputs);
    const { ordinals, lineErrors, whole } = await addSourceRows(req, sourcePath, sorter, verdicts, digests.source);
    const identity = await checkedIdentity(req, digests, whole);
    const { problems, firstDuplicate } = await joinKeys(req, sourcePath, sorter, verdicts);
    const stopMessage = async (ordinal: number) =>
      lineErrors.ordinal === ordinal ? lineErrors.value! : await joinErrorMessage(req, sourcePath, problems.value!);
    const paths = planPathsOf(join(req.workDir, 'plan.bin'));
    const written = await writePlanRecords(
      tmpPlanPaths(paths),
      verdicts,
      ordinals,
      planRecordsOptions(req, names.agents.list),
      stopMessage,
    );
    await refuseChanged(files);
    await publishPlanFiles(paths);
    const summary: PlanSummary = {
      planPath: paths.plan,
      attemptsPath: paths.attempts,
      recordBytes: PLAN_RECORD_BYTES,
      files,
      sourcePath,
      rows: written.rows,
      // The run's rollouts: distinct keys within the limit (recovery's are the files' keys).
      ...(req.judgeFailedOnly ? {} : { keys: written.yielded - written.duplicates }),
      agents: names.agents.list,
      servers: names.servers.list,
      rowsPerAgent: written.rowsPerAgent,
      ...(req.order && req.order.kind !== 'file' ? { order: req.order } : {}),
      ...(identity ? { identity } : {}),
    };
    await writeFileAtomic(join(req.workDir, 'plan.json'), JSON.stringify(summary));
    return { ...summary, messages: planMessages(req, written, firstDuplicate.value) };
  } finally {
    verdicts.dispose();
    await sorter.dispose();
  }
}

/**
 * A plain run's identity digests (not recovery's: its source is a sidecar that `--append` grows),
 * checked on `--resume` against the ones saved with the run before anything is written.
 */
async function checkedIdentity(
  req: PlanRequest,
  digests: { inputs: ContentDigest; source: ContentDigest },
  whole: boolean,
): Promise<InputIdentity | null> {
  if (req.judgeFailedOnly) return null;
  const identity: InputIdentity = { inputs: digests.inputs.hex(), ...(whole ? { rollouts: digests.source.hex() } : {}) };
  if (req.resume) await refuseOtherInputs({ ...req, output: req.outputs.output }, identity);
  return identity;
}

/** The message of a join problem; a missing input names the row's key, read back from the source. */
async function joinErrorMessage(req: PlanRequest, sourcePath: string, problem: JoinProblem): Promise<string> {
  if (problem.kind === 'shape') return problem.message;
  const fh = await open(sourcePath, 'r');
  try {
    const row = JSON.parse(await readRange(fh, problem.offset, problem.length)) as Record<string, unknown>;
    return noMatchingInput(sourcePath, problem.line, keyOf(row)!, req.inputsPath);
  } finally {
    await fh.close();
  }
}
