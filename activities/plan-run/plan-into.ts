/**
 * The plan phase's body (spec §4.5–§4.8): every line of the inputs and the source checked, joined
 * by key, and written as the plan. No activity context here: activities/plan-run.ts runs it in
 * the activity, and the plan made ahead (plan-ahead-thread.ts) on a thread that therefore loads
 * no Temporal SDK. (Over 300 lines on purpose: its passes share the request, the interned names
 * and the first-error bookkeeping that decides which message a user sees; the key join's
 * decisions themselves live in src/planning/.)
 */
import { existsSync } from 'node:fs';
import { mkdir, open, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../../src/contract/errors.js';
import { sidecarPath } from '../../src/contract/file-names.js';
import { budgetExhausted, noMatchingInput, resumeSummary, skippingResume } from '../../src/contract/messages.js';
import { isJudgeFailure } from '../../src/contract/outcome.js';
import { describeRolloutRowProblem } from '../../src/contract/row-shapes.js';
import { keyId, keyOf, keyWithNullDefaults } from '../../src/contract/row-key.js';
import type { FileIdentity, OutputPaths, PlanSummary, RetryRules } from '../../src/contract/run-spec.js';
import type { RoutingTable } from '../../src/config/routing.js';
import { routeInputRow } from '../../src/planning/input-route.js';
import { writeFileAtomic } from '../../src/io/atomic-file.js';
import { chunkLine, isBlank, jsonlLines, type JsonlLine } from '../../src/io/jsonl-lines.js';
import { digestNums, lineDigest } from '../../src/io/line-digest.js';
import { ExternalSorter, forEachGroup } from '../../src/io/external-sort.js';
import { FastInputRows, FastSourceRows } from '../../src/planning/fast-rows.js';
import { compareKeyedRecords, keyedRecordCodec, type KeyedRecord } from '../../src/planning/keyed-records.js';
import { outputKeyIds, sidecarAttemptLines } from '../../src/planning/output-cache.js';
import { sameStamp } from '../../src/contract/file-stamp.js';
import { fileNow } from '../../src/io/file-identity.js';
import { PLAN_RECORD_BYTES, PlanWriter } from '../../src/planning/plan-file.js';
import { readRange } from '../../src/io/read-range.js';
import { scannedReads } from '../../src/io/scan-ahead.js';
import { decideKey, Kind, type JoinProblem, type VerdictSink } from '../../src/planning/plan-keys.js';
import { Names } from '../../src/planning/names.js';
import { Verdict, VerdictFile } from '../../src/planning/plan-verdicts.js';
import { malformedJsonLine, notUtf8Line } from '../../src/contract/line-errors.js';

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
  /** Records the key join holds in memory before it sorts them to disk (tests make it small). */
  sortMaxRecords?: number;
  /** Files at least this big are scanned on a second thread too (`ScanAhead`; tests make it small). */
  scanAheadMinBytes?: number;
}

/** What the plan phase found, and what to tell the user about it. */
export interface PlanOutcome extends PlanSummary {
  messages: string[];
}

function parseLine(path: string, line: JsonlLine): Record<string, unknown> {
  const { lineNo, text } = line;
  if (!line.utf8) {
    throw notUtf8Line(path, lineNo);
  }
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (err) {
    throw malformedJsonLine(path, lineNo, text, err);
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    throw new InputError(`${path}:${lineNo}: not a JSON object; every line must be one row object`);
  }
  return row as Record<string, unknown>;
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
    await rm(join(req.workDir, 'plan.bin.tmp'), { force: true });
    await rmdir(req.workDir).catch(() => undefined);
    throw err;
  }
}

/** Empties the work directory (made if missing). */
export async function freshWorkDir(workDir: string): Promise<void> {
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
}

/** Facts about keys, read before the source (errors in these files come first, in this order). */
async function addKeyFacts(req: PlanRequest, sorter: ExternalSorter<KeyedRecord>, agents: Names, servers: Names): Promise<void> {
  // Each line is checked by the scanner (fast-rows.ts); a line it does not vouch for takes the full path.
  const fast = new FastInputRows(req.routing, agents, servers);
  const reads = scannedReads(req.inputsPath, FastInputRows.names, { digests: true, minBytes: req.scanAheadMinBytes });
  for await (const { chunk, read: scanned } of reads) {
    const { data } = chunk;
    for (let k = 0; k < chunk.count; k++) {
      const start = chunk.start[k];
      const end = chunk.end[k];
      const ok = fast.read(data, start, end, scanned, k);
      let record: KeyedRecord;
      if (ok !== null) {
        const digest = scanned ? scanned.digests[k] : lineDigest(data.subarray(start, end));
        const nums = [Kind.Input, chunk.firstLineNo + k, chunk.offset + start, end - start, ok.agent, ok.server, ...digestNums(digest)];
        record = { key: ok.key, nums, text: null };
      } else {
        const line = chunkLine(chunk, k, true);
        if (isBlank(line.text)) continue;
        const row = parseLine(req.inputsPath, line);
        const { agent, server } = routeInputRow(row, line.text, req.routing, `${req.inputsPath}:${line.lineNo}`);
        const nums = [Kind.Input, line.lineNo, line.offset, line.length, agents.id(agent), servers.id(server), ...digestNums(line.digest)];
        record = { key: keyId(keyOf(row)!), nums, text: null };
      }
      const adding = sorter.add(record);
      if (adding) await adding;
    }
  }
  // The output's keys: recovery's present-set (§4.6.3) unless the outputs are cleared, and
  // --resume's done keys (§4.8; --resume never clears).
  if (req.resume || (req.judgeFailedOnly && !req.outputsCleared)) {
    for await (const id of outputKeyIds(req.outputs.output, req)) await sorter.add({ key: id, nums: [Kind.Output], text: null });
  }
  // Recovery: every keyed line of --rollouts is present once seeded. Malformed lines stop the run,
  // since seeding would copy them verbatim.
  if (req.judgeFailedOnly) {
    for await (const line of jsonlLines(req.rolloutsPath)) {
      if (isBlank(line.text)) continue;
      const key = keyOf(parseLine(req.rolloutsPath, line));
      if (key) await sorter.add({ key: keyId(key), nums: [Kind.Rollouts], text: null });
    }
  }
  if (req.resume) {
    for await (const a of sidecarAttemptLines(req.outputs.sidecar, req)) {
      await sorter.add({ key: a.id, nums: [Kind.Sidecar, a.terminal ? 1 : 0], text: null });
    }
  }
}

/** The first row (in file order) that stops the run, of one kind. */
class FirstAt<T> {
  ordinal = Infinity;
  value: T | undefined;
  offer(ordinal: number, value: T): void {
    if (ordinal < this.ordinal) {
      this.ordinal = ordinal;
      this.value = value;
    }
  }
}

async function writePlan(req: PlanRequest): Promise<PlanOutcome> {
  const agents = new Names();
  const servers = new Names();
  const messages: string[] = [];
  const sourcePath = req.judgeFailedOnly ? sidecarPath(req.rolloutsPath) : req.rolloutsPath;
  if (req.judgeFailedOnly && !existsSync(sourcePath)) {
    throw new InputError(
      `No such file or directory: '${sourcePath}': --judge-failed-only re-verifies the judge failures in the sidecar of --rollouts`,
    );
  }
  const sorter = new ExternalSorter<KeyedRecord>({
    dir: req.workDir,
    name: 'plan-keys',
    compare: compareKeyedRecords,
    codec: keyedRecordCodec,
    maxRecords: req.sortMaxRecords,
  });
  const verdicts = new VerdictFile(join(req.workDir, 'plan.verdicts'));
  // The files the plan's offsets point into, as they are before they are read (checked after; a
  // missing file is reported by the read itself).
  const before = {
    source: await fileNow(sourcePath),
    inputs: await fileNow(req.inputsPath),
    rollouts: req.judgeFailedOnly ? await fileNow(req.rolloutsPath) : null,
  };
  try {
    await addKeyFacts(req, sorter, agents, servers);

    // Source rows, in file order. Lines that stop the run whatever the keys say (unparseable lines;
    // outside recovery, every shape problem) are decided here; the rest go to the key join.
    const lineErrors = new FirstAt<string>();
    let ordinals = 0;
    /** The full path for one source line: its sort record, or null (blank, not yielded, or an error). */
    const fullPath = (line: JsonlLine, ordinal: number): KeyedRecord | null => {
      let row: Record<string, unknown>;
      try {
        row = parseLine(sourcePath, line);
      } catch (err) {
        verdicts.set(ordinal, Verdict.Error);
        lineErrors.offer(ordinal, (err as Error).message);
        return null;
      }
      if (req.judgeFailedOnly && !isJudgeFailure(row, req)) return null;
      const problem = describeRolloutRowProblem(row, line.text);
      const shape = problem ? `${sourcePath}:${line.lineNo}: ${problem}` : null;
      if (shape && !req.judgeFailedOnly) {
        verdicts.set(ordinal, Verdict.Error);
        lineErrors.offer(ordinal, shape);
        return null;
      }
      // Recovery keys rows with missing indices as null (§4.6.4); the row then fails its shape check.
      const key = req.judgeFailedOnly ? keyWithNullDefaults(row) : keyOf(row)!;
      return {
        key: keyId(key),
        nums: [Kind.Source, ordinal, line.offset, line.length, line.lineNo, ...digestNums(line.digest)],
        text: shape,
      };
    };
    // Outside recovery the scanner vouches for most lines (fast-rows.ts); recovery reads every row in full.
    const fast = req.judgeFailedOnly ? null : new FastSourceRows();
    // Recovery reads every row in full: no thread scans for it.
    const minBytes = fast ? req.scanAheadMinBytes : Infinity;
    const reads = scannedReads(sourcePath, FastSourceRows.names, { digests: true, minBytes });
    lines: for await (const { chunk, read: scanned } of reads) {
      const { data } = chunk;
      for (let k = 0; k < chunk.count; k++) {
        // Outside recovery every non-blank line is yielded, so the limit is a count of lines.
        if (!req.judgeFailedOnly && req.limit !== null && ordinals >= req.limit) break lines;
        const start = chunk.start[k];
        const end = chunk.end[k];
        const key = fast?.keyId(data, start, end, scanned, k) ?? null;
        let record: KeyedRecord | null;
        if (key !== null) {
          const digest = scanned ? scanned.digests[k] : lineDigest(data.subarray(start, end));
          const nums = [Kind.Source, ordinals++, chunk.offset + start, end - start, chunk.firstLineNo + k, ...digestNums(digest)];
          record = { key, nums, text: null };
        } else {
          const line = chunkLine(chunk, k, true);
          if (isBlank(line.text)) continue;
          record = fullPath(line, ordinals++);
        }
        if (record === null) continue;
        const adding = sorter.add(record);
        if (adding) await adding;
      }
    }

    const joinErrors = new FirstAt<JoinProblem>();
    const firstDuplicate = new FirstAt<string>();
    const policy = { recovery: req.judgeFailedOnly, resume: req.resume, maxAttempts: req.maxAttempts };
    const sink: VerdictSink = {
      verdict: (ordinal, verdict, plan) => verdicts.set(ordinal, verdict, plan),
      problem: (ordinal, problem) => joinErrors.offer(ordinal, problem),
      duplicate: (ordinal, line, firstLine) => firstDuplicate.offer(ordinal, `${sourcePath}:${line} repeats the key of line ${firstLine}`),
    };
    await forEachGroup(
      sorter.sortedChunks(),
      (r) => r.key,
      (group) => decideKey(group, policy, sink),
    );

    // The verdicts in file order: apply the limit, stop at the first error, write the plan.
    const planPath = join(req.workDir, 'plan.bin');
    const tmpPath = `${planPath}.tmp`;
    const writer = await PlanWriter.create(tmpPath);
    const rowsPerAgent: Record<string, number> = {};
    const skipped = { done: 0, terminal: 0, maxed: 0 };
    let yielded = 0;
    let duplicates = 0;
    try {
      for (const { ordinal, verdict, plan } of verdicts.inOrder(ordinals)) {
        if (req.limit !== null && yielded >= req.limit) break;
        if (verdict === Verdict.NotYielded) continue;
        if (verdict === Verdict.Error) {
          if (lineErrors.ordinal === ordinal) throw new InputError(lineErrors.value);
          throw new InputError(await joinErrorMessage(req, sourcePath, joinErrors.value!));
        }
        yielded++;
        if (verdict === Verdict.Duplicate) duplicates++;
        else if (verdict === Verdict.SkipDone) skipped.done++;
        else if (verdict === Verdict.SkipTerminal) skipped.terminal++;
        else if (verdict === Verdict.SkipMaxed) skipped.maxed++;
        else {
          await writer.add(plan);
          const agent = agents.list[plan.agent];
          rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
        }
      }
    } finally {
      await writer.close();
    }
    const files: FileIdentity[] = [
      { path: sourcePath, ...before.source! },
      { path: req.inputsPath, ...before.inputs! },
      // Recovery: --rollouts' keys decided what is re-verified, and seeding copies its successes.
      ...(req.judgeFailedOnly ? [{ path: req.rolloutsPath, ...before.rollouts! }] : []),
    ];
    for (const f of files) {
      if (!sameStamp(f, await fileNow(f.path))) {
        throw new InputError(
          `'${f.path}' changed while the run was planning: wait until whatever writes it has finished, then run the same command again`,
        );
      }
    }
    await rename(tmpPath, planPath);
    if (duplicates > 0) {
      messages.push(
        `WARNING: skipped ${duplicates} source row(s) whose key appeared earlier in the file (the first is verified; ` +
          `first repeat: ${firstDuplicate.value}). NeMo Gym would verify and write each copy.`,
      );
    }
    // In recovery the output always exists when NeMo Gym reads the cache: seeding has created it.
    // Neither the output nor its sidecar exists: "Skipping resume_from_cache ...".
    const found = existsSync(req.outputs.output) || existsSync(req.outputs.sidecar);
    if (req.resume && !found && !req.judgeFailedOnly) messages.push(skippingResume());
    else if (req.resume) messages.push(resumeSummary({ total: yielded, ...skipped, remaining: writer.count }));
    if (skipped.maxed > 0) messages.push(budgetExhausted(skipped.maxed, req.maxAttempts, req.outputs.sidecar));
    const summary: PlanSummary = {
      planPath,
      recordBytes: PLAN_RECORD_BYTES,
      files,
      sourcePath,
      rows: writer.count,
      // The run's rollouts: distinct keys within the limit (recovery's are the files' keys).
      ...(req.judgeFailedOnly ? {} : { keys: yielded - duplicates }),
      agents: agents.list,
      servers: servers.list,
      rowsPerAgent,
    };
    await writeFileAtomic(join(req.workDir, 'plan.json'), JSON.stringify(summary));
    return { ...summary, messages };
  } finally {
    verdicts.dispose();
    await sorter.dispose();
  }
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
