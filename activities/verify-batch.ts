import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import {
  classifyResult,
  stampResult,
  stampsFromPayload,
  verifyFailedRow,
  verifyRejectedRow,
  type Stamps,
} from '../src/contract/outcome.js';
import { InputChangedError } from '../src/contract/errors.js';
import { FailureType } from '../src/contract/failure-types.js';
import { inputChanged } from '../src/contract/messages.js';
import { JUDGE_FAILED_CLASS } from '../src/contract/keys.js';
import { buildPayload, readRolloutResponse } from '../src/contract/payload.js';
import type { AgentCounts, BatchResult, PlanSummary } from '../src/contract/run-spec.js';
import { publishFile, writeFileAtomic } from '../src/io/atomic-file.js';
import { fileNow } from '../src/io/file-identity.js';
import { LEGACY_PLAN_RECORD_BYTES, readPlanRange, UNCHECKED, type PlanRecord } from '../src/io/plan-file.js';
import { ChangedRangeError, readRanges, type ByteRange } from '../src/io/read-ranges.js';
import { writeFully } from '../src/io/write-fully.js';
import type { VerifyReply } from '../src/verifier/client.js';
import { VerifierUnavailableError } from '../src/verifier/errors.js';
import { DEFAULT_VERIFY_RETRY } from '../src/verifier/retry-policy.js';
import { verifyWithRetries } from '../src/verifier/verify-with-retries.js';
import type { ActivityDeps } from './deps.js';
import { rejudgeListPath } from './plan-round.js';
import { failFastOnUserError } from './user-errors.js';

/**
 * Activity attempts in which a row's `/verify` must exhaust its retries (a 5xx, a reset, a
 * timeout: anything but throttling) while the same server answers another row of the batch,
 * before the row is written to the sidecar as `transient`.
 */
const ROW_FAILURE_STRIKES = 3;

export interface VerifyBatchRequest {
  inputsPath: string;
  plan: Pick<PlanSummary, 'planPath' | 'sourcePath' | 'agents' | 'servers' | 'recordBytes' | 'files'>;
  /** Resources server name -> base URL. */
  serverUrls: Record<string, string>;
  workDir: string;
  /** Re-judgment round (0 for the first pass); part of the part file names. */
  round: number;
  batch: number;
  /** Plan records [from, to). */
  from: number;
  to: number;
  /** `/verify` requests this batch may have in flight. */
  parallelism: number;
  requestTimeoutMs: number;
  /** When > 0: fail the run if this batch's first `rejectGuard` replies are all 4xx rejections. */
  rejectGuard: number;
  /** The run's sidecar (`<out>_failures.jsonl`), for messages; absent in runs started before it was passed. */
  outputSidecar?: string;
}

/** Checkpoint sent with heartbeats: which rows are in the partial files, and how long those are. */
interface Checkpoint {
  done: number[];
  /** Plan indices whose verdict was `judge_failed` (candidates for the next re-judgment round). */
  judgeFailedRows: number[];
  mainBytes: number;
  sidecarBytes: number;
  counts: Omit<BatchResult, 'batch' | 'mainPart' | 'sidecarPart'>;
  /** Row index -> attempts in which the row failed with 5xx while the server answered another row. */
  strikes: Record<number, number>;
}

function emptyCounts(): Checkpoint['counts'] {
  return { main: 0, failed: 0, dropped: 0, rejected: 0, judgeFailed: 0, perAgent: {}, throttled: 0, latencyMsSum: 0, latencyCount: 0 };
}

function agentCounts(c: Checkpoint['counts'], agent: string): AgentCounts {
  return (c.perAgent[agent] ??= { done: 0, failed: 0, dropped: 0, rewardSum: 0 });
}

/** A result waiting to be written: its line (if any) and how it counts. */
interface PendingRow {
  row: number;
  target: 'main' | 'sidecar' | null;
  line: Buffer | null;
  count: (c: Checkpoint['counts'], cp: Checkpoint) => void;
  written: () => void;
  failed: (err: unknown) => void;
}

/**
 * The batch's two partial files plus its checkpoint. Rows are recorded in groups: whatever finished
 * while the previous write was under way is written with one write per file, then counted and
 * marked done — so a checkpoint taken at any moment covers exactly the rows whose lines lie within
 * its recorded lengths, and a retry never repeats or loses one.
 */
class BatchRecorder {
  private pending: PendingRow[] = [];
  private writing: Promise<void> | null = null;
  private constructor(
    private readonly main: FileHandle,
    private readonly sidecar: FileHandle,
    readonly checkpoint: Checkpoint,
  ) {}

  static async open(mainPath: string, sidecarPath: string, checkpoint: Checkpoint): Promise<BatchRecorder> {
    const openAt = async (path: string, keep: number) => {
      const fh = await open(path, existsSync(path) ? 'r+' : 'w+');
      await fh.truncate(keep);
      return fh;
    };
    return new BatchRecorder(await openAt(mainPath, checkpoint.mainBytes), await openAt(sidecarPath, checkpoint.sidecarBytes), checkpoint);
  }

  /** Writes `line` to the main output or the sidecar (or nowhere), then applies `count`. */
  record(
    row: number,
    target: 'main' | 'sidecar' | null,
    line: string | null,
    count: (c: Checkpoint['counts'], cp: Checkpoint) => void,
  ): Promise<void> {
    return new Promise((written, failed) => {
      this.pending.push({ row, target, line: line === null ? null : Buffer.from(line + '\n', 'utf8'), count, written, failed });
      this.writing ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending;
      this.pending = [];
      try {
        const cp = this.checkpoint;
        const main = Buffer.concat(group.filter((p) => p.target === 'main' && p.line).map((p) => p.line!));
        const side = Buffer.concat(group.filter((p) => p.target === 'sidecar' && p.line).map((p) => p.line!));
        await Promise.all([writeFully(this.main, main, cp.mainBytes), writeFully(this.sidecar, side, cp.sidecarBytes)]);
        cp.mainBytes += main.length;
        cp.sidecarBytes += side.length;
        for (const p of group) {
          p.count(cp.counts, cp);
          cp.done.push(p.row);
        }
        group.forEach((p) => p.written());
      } catch (err) {
        group.forEach((p) => p.failed(err));
      }
    }
    this.writing = null;
  }

  /** A copy of the checkpoint, consistent at this instant. */
  snapshot(): Checkpoint {
    const cp = this.checkpoint;
    return {
      ...cp,
      done: [...cp.done],
      judgeFailedRows: [...cp.judgeFailedRows],
      counts: structuredClone(cp.counts),
      strikes: { ...cp.strikes },
    };
  }

  async close(): Promise<void> {
    await this.writing;
    await Promise.all([this.main.sync(), this.sidecar.sync()]);
    await Promise.all([this.main.close(), this.sidecar.close()]);
  }
}

/**
 * Verify phase: one batch of plan rows. Reads each row by offset, builds the payload (spec §4.7.3),
 * calls `/verify` (transport errors, timeouts, 408/429/5xx retried with backoff; when they persist
 * the activity fails and Temporal retries it later, keeping the rows already done through the
 * heartbeat checkpoint), stamps and routes each result (spec §1.6, §4.10) into the batch's part
 * files, and publishes them atomically. Returns counts only; the workflow commits the parts.
 */
export function verifyBatch(deps: ActivityDeps) {
  return (req: VerifyBatchRequest): Promise<BatchResult> => failFastOnUserError(() => runBatch(deps, req));
}

async function runBatch(deps: ActivityDeps, req: VerifyBatchRequest): Promise<BatchResult> {
  const ctx = Context.current();
  const name = `r${req.round}-b${req.batch}`;
  const mainPart = join(req.workDir, `${name}.main.part`);
  const sidecarPart = join(req.workDir, `${name}.sidecar.part`);
  const resultPath = join(req.workDir, `${name}.json`);
  // A previous attempt finished but its completion was lost: its published result stands.
  if (existsSync(resultPath)) return JSON.parse(await readFile(resultPath, 'utf8')) as BatchResult;

  const mainPartial = `${mainPart}.partial`;
  const sidecarPartial = `${sidecarPart}.partial`;
  let cp = ctx.info.heartbeatDetails as Checkpoint | undefined;
  if (cp && !(await partialsCover(mainPartial, sidecarPartial, cp))) cp = undefined;
  const checkpoint: Checkpoint = cp ?? { done: [], judgeFailedRows: [], mainBytes: 0, sidecarBytes: 0, counts: emptyCounts(), strikes: {} };
  checkpoint.strikes ??= {}; // checkpoints of earlier versions

  const records = await readPlanRange(req.plan.planPath, req.from, req.to, req.plan.recordBytes ?? LEGACY_PLAN_RECORD_BYTES);
  const doneSet = new Set(checkpoint.done);
  const todo = records.map((_, i) => i).filter((i) => !doneSet.has(i));
  // The batch's rows, read with a few large reads (its source rows are neighbours in the file),
  // each proven to be the planned bytes before anything is sent.
  const { sources, inputs: inputRows } = await readPlannedRows(req, records, todo);
  const client = deps.verifier(req.requestTimeoutMs);
  const recorder = await BatchRecorder.open(mainPartial, sidecarPartial, checkpoint);
  let replies = 0;
  let rejectedReplies = 0;
  const beat = () => ctx.heartbeat(recorder.snapshot());
  const beatTimer = setInterval(beat, Math.max(1000, (ctx.info.heartbeatTimeoutMs ?? 30000) / 3));
  // The first lane that fails stops the others: their requests are aborted and nothing more starts.
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.cancellationSignal, stop.signal]);
  setMaxListeners(0, signal); // every request in flight listens to it
  // The row the server last answered 2xx in this attempt (a known-good probe), and the rows struck.
  let lastAnswered: number | null = null;
  const struck: Array<{ row: number; error: VerifierUnavailableError; stamps: Stamps }> = [];
  try {
    let next = 0;
    const lane = async () => {
      while (next < todo.length && !signal.aborted) {
        const k = next++;
        const i = todo[k];
        const rec = records[i];
        const agent = req.plan.agents[rec.agent];
        const server = req.plan.servers[rec.server];
        const sourceRaw = sources[k];
        const inputRaw = inputRows[k];
        const payload = buildPayload(inputRaw, readRolloutResponse(sourceRaw)!);
        // The payload's stamps are the input row's (only `response` differs): scan the small text.
        const stamps = stampsFromPayload(inputRaw);
        const started = performance.now();
        let throttled = 0;
        let reply;
        try {
          reply = await verifyWithRetries(client, req.serverUrls[server], payload, {
            ...DEFAULT_VERIFY_RETRY,
            signal,
            onRetry: (r) => {
              if (r.status === 429 || r.status === 503) throttled++;
            },
          });
        } catch (err) {
          // Throttling (429), or an outage (every row failing, the probe too), fails the attempt:
          // Temporal retries it later, without bound. A failure of this row alone is a strike.
          if (!(err instanceof VerifierUnavailableError) || err.lastStatus === 429) throw err;
          const send = (body: string) => client.verifyOnce(req.serverUrls[server], body, signal);
          if (!(await serverAnswersOthers(req, records, i, lastAnswered, send))) throw err;
          const strikes = (checkpoint.strikes[i] = (checkpoint.strikes[i] ?? 0) + 1);
          if (strikes < ROW_FAILURE_STRIKES) {
            struck.push({ row: i, error: err, stamps });
            continue;
          }
          const status = err.lastStatus ?? null;
          ctx.log.warn(
            `${rowPlace(req, rec, stamps)}: /verify failed ${strikes} times (last: ${err.lastReason}) while the server answered other rows; ` +
              `written to ${sidecarPathOf(req)} as transient (--resume tries it again)`,
          );
          await recorder.record(i, 'sidecar', verifyFailedRow(stamps, status, err.lastExcerpt ?? err.lastReason), (c) => {
            c.failed++;
            agentCounts(c, agent).failed++;
          });
          continue;
        }
        if (reply.kind === 'ok') lastAnswered = i;
        const latency = performance.now() - started;
        const signals = (c: Checkpoint['counts']) => {
          c.throttled += throttled;
          if (throttled === 0) {
            c.latencyMsSum += latency;
            c.latencyCount++;
          }
        };
        replies++;
        if (reply.kind === 'rejected') {
          rejectedReplies++;
          if (req.rejectGuard > 0 && replies === req.rejectGuard && rejectedReplies === replies) {
            throw ApplicationFailure.nonRetryable(
              `resources server '${server}' (${req.serverUrls[server]}) rejected the first ${replies} /verify requests ` +
                `(last: HTTP ${reply.status}: ${reply.excerpt}). The server or the config is wrong: check that --inputs/--rollouts ` +
                'belong to this resources server and that it is the right server; nothing was committed from this batch.',
              FailureType.VerifyRejected,
            );
          }
          await recorder.record(i, 'sidecar', verifyRejectedRow(stamps, reply.status, reply.excerpt), (c) => {
            signals(c);
            c.failed++;
            c.rejected++;
            agentCounts(c, agent).failed++;
          });
          continue;
        }
        const result = reply.result;
        const outcome = classifyResult(result);
        if (outcome === 'drop') {
          await recorder.record(i, null, null, (c) => {
            signals(c);
            c.dropped++;
            agentCounts(c, agent).dropped++;
          });
        } else if (outcome === 'failure') {
          const judgeFailed = result._ng_failure_class === JUDGE_FAILED_CLASS;
          await recorder.record(i, 'sidecar', stampResult(reply.body, stamps), (c, cp) => {
            signals(c);
            c.failed++;
            if (judgeFailed) {
              c.judgeFailed++;
              cp.judgeFailedRows.push(req.from + i);
            }
            agentCounts(c, agent).failed++;
          });
        } else {
          await recorder.record(i, 'main', stampResult(reply.body, stamps), (c) => {
            signals(c);
            c.main++;
            const a = agentCounts(c, agent);
            a.done++;
            if (typeof result.reward === 'number') a.rewardSum += result.reward;
          });
        }
      }
    };
    const first: { error?: Error } = {};
    const lanes = Array.from({ length: Math.max(1, Math.min(req.parallelism, todo.length)) }, () =>
      lane().catch((err: Error) => {
        first.error ??= err;
        stop.abort();
      }),
    );
    await Promise.all(lanes);
    if (first.error) throw first.error;
    if (struck.length > 0) {
      beat(); // the strikes must reach the next attempt
      const { row, error, stamps } = struck[0];
      throw ApplicationFailure.retryable(
        `${struck.length} row(s) of the batch failed while the server answered other rows; retried later, written to the sidecar ` +
          `as transient after ${ROW_FAILURE_STRIKES} attempts (${rowPlace(req, records[row], stamps)}, attempt ${checkpoint.strikes[row]}: ${error.message})`,
        FailureType.RowsFailing,
      );
    }
  } finally {
    clearInterval(beatTimer);
    await recorder.close();
  }
  await publishFile(mainPartial, mainPart);
  await publishFile(sidecarPartial, sidecarPart);
  const result: BatchResult = { batch: req.batch, mainPart, sidecarPart, ...recorder.checkpoint.counts };
  await writeFileAtomic(rejudgeListPath(req.workDir, req.round, req.batch), JSON.stringify(recorder.checkpoint.judgeFailedRows));
  await writeFileAtomic(resultPath, JSON.stringify(result));
  return result;
}

/**
 * True if the server answers another row of the batch (of the same server) with a 2xx now, so
 * row `i`'s 5xx is its own and not an outage. Tries `first` (a row answered before), then the rows
 * after `i` in the batch, done ones included (read from disk), three at most.
 */
async function serverAnswersOthers(
  req: VerifyBatchRequest,
  records: PlanRecord[],
  i: number,
  first: number | null,
  send: (body: string) => Promise<VerifyReply>,
): Promise<boolean> {
  const after = records.map((_, n) => (i + 1 + n) % records.length);
  const candidates = [...new Set([...(first === null ? [] : [first]), ...after])].filter(
    (j) => j !== i && records[j].server === records[i].server,
  );
  for (const j of candidates.slice(0, 3)) {
    const { sources, inputs } = await readPlannedRows(req, records, [j]);
    if ((await send(buildPayload(inputs[0], readRolloutResponse(sources[0])!))).kind === 'ok') return true;
  }
  return false;
}

/** A row for messages: `file:line (key (t, r))`, the key as its exact digits. */
function rowPlace(req: Pick<VerifyBatchRequest, 'plan'>, rec: PlanRecord, stamps: Stamps): string {
  return `${req.plan.sourcePath}:${rec.sourceLine} (key (${stamps.task}, ${stamps.rollout}))`;
}

/** The sidecar this batch's failures are committed to, for messages. */
function sidecarPathOf(req: Pick<VerifyBatchRequest, 'outputSidecar'>): string {
  return req.outputSidecar ?? 'the sidecar';
}

/** A plan checksum to prove a read by, or undefined for a legacy plan's record (unchecked). */
const proofOf = (sum: number) => (sum === UNCHECKED ? undefined : sum);

/**
 * The source and input rows of plan records `rows`, each proven to be the bytes the plan read
 * (its checksum): a file changed since planning stops the run (`InputChangedError`) before
 * anything is sent or written.
 */
async function readPlannedRows(
  req: Pick<VerifyBatchRequest, 'plan' | 'inputsPath'>,
  records: PlanRecord[],
  rows: number[],
): Promise<{ sources: string[]; inputs: string[] }> {
  const read = async (path: string, where: (rec: PlanRecord) => string, range: (rec: PlanRecord) => ByteRange) => {
    try {
      return await readRanges(
        path,
        rows.map((i) => range(records[i])),
      );
    } catch (err) {
      if (!(err instanceof ChangedRangeError)) throw err;
      const planned = req.plan.files?.find((f) => f.path === path);
      throw new InputChangedError(inputChanged(path, where(records[rows[err.index]]), planned, await fileNow(path)));
    }
  };
  const sources = await read(
    req.plan.sourcePath,
    (rec) => `line ${rec.sourceLine}`,
    (rec) => ({ offset: rec.sourceOffset, length: rec.sourceLength, sum: proofOf(rec.sourceSum) }),
  );
  const inputs = await read(
    req.inputsPath,
    (rec) => `the materialized input of ${req.plan.sourcePath}:${rec.sourceLine}`,
    (rec) => ({ offset: rec.inputOffset, length: rec.inputLength, sum: proofOf(rec.inputSum) }),
  );
  return { sources, inputs };
}

/** True if the partial files still hold at least what the checkpoint says was written. */
async function partialsCover(mainPartial: string, sidecarPartial: string, cp: Checkpoint): Promise<boolean> {
  try {
    const [m, s] = await Promise.all([stat(mainPartial), stat(sidecarPartial)]);
    return m.size >= cp.mainBytes && s.size >= cp.sidecarBytes;
  } catch {
    return false;
  }
}
