/**
 * One attempt of a batch, as an object: `open` prepares it (its checkpoint, its rows, its part
 * files), `run` sends its rows on the pooled lanes, records each result, settles how the lanes
 * ended, and ends the attempt in one of four ways: published, held (allowance spent), handed back
 * on a worker shutdown, or failed (retried by Temporal from its heartbeat).
 */
import { Context } from '@temporalio/activity';
import { auditKey, auditRow, lastNotedAttempt, lostAttemptLine, noteAttempt, noteRow } from '../../src/contract/batch-audit.js';
import { CHECKPOINT_BEAT_MS } from '../../src/contract/checkpoint-interval.js';
import type { BatchResult } from '../../src/contract/run-spec.js';
import { readPlanRange, type PlanRecord } from '../../src/planning/plan-file.js';
import { settleReply, type VerifierClient, type VerifyReply } from '../../src/verifier/client.js';
import { DEFAULT_VERIFY_RETRY } from '../../src/verifier/retry-policy.js';
import { verifyWithRetries } from '../../src/verifier/verify-with-retries.js';
import type { ActivityDeps } from '../deps.js';
import { AllowanceSpent, RequestAllowance } from './allowance.js';
import { cancelledByRun, failedAttemptLine, shuttingDown } from './attempt-ends.js';
import { batchFiles, killAfterPublishing, publish } from './batch-files.js';
import { BatchRecorder } from './batch-recorder.js';
import { BatchStops } from './batch-stops.js';
import { resumeCheckpoint, rowsOf, type Checkpoint } from './checkpoint.js';
import { heldCheckpoint, holdBatch } from './held.js';
import { laneGroup } from './lane-pool.js';
import { runPooledLanes, type Recording } from './lanes.js';
import { prepareRow, rowFacts, type Prepared } from './prepared-row.js';
import { RejectGuard } from './reject-guard.js';
import type { VerifyBatchRequest } from './request.js';
import { routeReply, routeSetAside, type Routed } from './route-reply.js';
import { RowStrikes } from './row-strikes.js';
import { RowWindows } from './row-windows.js';
import type { ReplyCounts } from './server-replies.js';

type BatchFiles = ReturnType<typeof batchFiles>;

/** What `open` reads and opens before any row is sent. */
interface Opened {
  checkpoint: Checkpoint;
  records: PlanRecord[];
  /** The batch's rows not done yet, as indexes into `records`. */
  todo: number[];
  rows: RowWindows;
  recorder: BatchRecorder;
}

export class BatchRun {
  private readonly ctx = Context.current();
  private readonly checkpoint: Checkpoint;
  private readonly records: PlanRecord[];
  private readonly todo: number[];
  private readonly rows: RowWindows;
  private readonly recorder: BatchRecorder;
  private readonly allowance: RequestAllowance;
  /** The process's HTTP pool for this request timeout. */
  private readonly http: VerifierClient;
  /** Sends through the allowance; every reply is counted for its server (a lone row is probed by the others: server-replies.ts). */
  private readonly client: Pick<VerifierClient, 'verifyOnce'>;
  /** The two abort controllers and the drain timer (batch-stops.ts). */
  private readonly stops: BatchStops;
  private readonly strikes: RowStrikes;
  private readonly guard: RejectGuard;
  /** Every second (the worker sends at most one in 2 s: src/contract/checkpoint-interval.ts): live progress. */
  private readonly beatTimer: NodeJS.Timeout;
  /** The allowance was spent with rows unfinished: they wait for the next launch. */
  private held = false;
  /** Rows answered by earlier attempts or launches: the report's throughput counts them where they were answered. */
  private readonly carried: number;

  private constructor(
    private readonly deps: ActivityDeps,
    private readonly req: VerifyBatchRequest,
    private readonly files: BatchFiles,
    opened: Opened,
  ) {
    ({ checkpoint: this.checkpoint, records: this.records, todo: this.todo, rows: this.rows, recorder: this.recorder } = opened);
    this.carried = rowsOf(this.checkpoint.counts);
    this.allowance = new RequestAllowance(this.checkpoint, req.allowance);
    this.http = deps.verifier(req.requestTimeoutMs);
    this.client = deps.replies.client(this.allowance.client(this.http));
    this.beatTimer = setInterval(() => this.beat(), Math.min(CHECKPOINT_BEAT_MS, (this.ctx.info.heartbeatTimeoutMs ?? 30000) / 3));
    this.stops = new BatchStops(this.ctx);
    this.guard = new RejectGuard(req.rejectGuard);
    this.strikes = new RowStrikes({
      req,
      records: this.records,
      checkpoint: this.checkpoint,
      replies: deps.replies,
      client: this.client,
      http: this.http,
      signal: this.stops.signal,
      log: this.ctx.log,
    });
  }

  /**
   * Prepares an attempt: its checkpoint (a retried attempt goes on from its heartbeat; a batch
   * launched again after it was held, from its held checkpoint), its plan records, the rows left,
   * read a window at a time ahead of the lanes (row-windows.ts: a few large reads each, every row
   * proven before it is sent; the first window, one row per lane, while the part files are opened).
   */
  static async open(deps: ActivityDeps, req: VerifyBatchRequest, files: BatchFiles): Promise<BatchRun> {
    const { info } = Context.current();
    const details: unknown = info.heartbeatDetails ?? (await heldCheckpoint(files.held));
    const checkpoint = await resumeCheckpoint(details, files.mainPartial, files.sidecarPartial);
    checkpoint.requestsUsed = (details as Checkpoint | undefined)?.requestsUsed ?? 0;
    noteLostAttempts(checkpoint, info.attempt);
    const records = await readPlanRange(req.plan.planPath, req.from, req.to, req.plan.recordBytes);
    const doneSet = new Set(checkpoint.done);
    const todo = records.map((_, i) => i).filter((i) => !doneSet.has(i));
    const rows = new RowWindows(req, records, todo, { firstRows: req.parallelism });
    rows.readAhead();
    const recorder = await BatchRecorder.open(files.mainPartial, files.sidecarPartial, checkpoint).catch(async (err: unknown) => {
      await rows.close();
      throw err;
    });
    return new BatchRun(deps, req, files, { checkpoint, records, todo, rows, recorder });
  }

  /** Sends the rows, settles how the lanes ended (or notes the failure), closes, and ends the attempt. */
  async run(): Promise<BatchResult> {
    try {
      await this.send();
      await this.settle();
    } catch (err) {
      await this.failed(err);
    } finally {
      await this.close();
    }
    return this.end();
  }

  /** The rows left, on the lanes pooled with the other batches of this run that this process runs (lane-pool.ts; a re-judgment's first). */
  private send(): Promise<void> {
    return runPooledLanes(
      {
        rows: this.todo.length,
        lanes: this.req.parallelism,
        going: () => this.stops.going() && !this.allowance.spent(),
        prepare: (k) => this.prepare(k),
        readAhead: (from, rows) => this.rows.readRows(from, rows),
        send: (row) => this.sendRow(row),
        fail: (err) => this.stops.fail(err),
        first: this.req.round > 0,
      },
      this.deps.lanes,
      laneGroup(this.ctx.info),
    );
  }

  /** Row `todo[k]` ready to send: read, its payload built. */
  private async prepare(k: number): Promise<Prepared> {
    const i = this.todo[k];
    return prepareRow(this.req, i, this.records[i], await this.rows.row(k));
  }

  /**
   * Sends a prepared row; returns what records its result, or nothing when there is nothing to
   * record (a failure of this row alone becomes a strike, recorded here when it sets the row aside;
   * a spent allowance leaves the row unfinished: the batch is held).
   */
  private async sendRow(p: Prepared): Promise<Recording> {
    const server = this.req.plan.servers[p.rec.server];
    const url = this.req.serverUrls[server];
    const started = performance.now();
    const mark = this.deps.replies.mark(url);
    let throttled = 0;
    let throttleWaitMs = 0;
    let reply: Exclude<VerifyReply, { kind: 'retryable' }>;
    try {
      reply = await verifyWithRetries(this.client, url, p.payload, {
        ...DEFAULT_VERIFY_RETRY,
        signal: this.stops.signal,
        gate: this.deps.throttle,
        onThrottleWait: (ms) => (throttleWaitMs += ms),
        onRetry: (r) => {
          this.stops.retrying();
          if (r.status === 429 || r.status === 503) throttled++;
        },
      });
    } catch (err) {
      if (!(err instanceof AllowanceSpent)) await this.rowFailed(err, p, url, mark);
      return;
    }
    if (reply.kind === 'ok') this.strikes.lastAnswered = p.i;
    const facts = rowFacts(this.req, p, performance.now() - started, throttled, throttleWaitMs);
    return () => {
      const settled = settleReply(reply);
      this.guard.observe(settled, server, url);
      this.record(p, routeReply(settled, p.stamps, facts, this.req.retry));
    };
  }

  /** A row whose retries are spent: a strike (row-strikes.ts), or set aside with its last one. */
  private async rowFailed(err: unknown, p: Prepared, url: string, mark: ReplyCounts): Promise<void> {
    const setAside = await this.strikes.strike(err, p.i, p.stamps, url, mark).catch((e: unknown) => {
      if (e instanceof AllowanceSpent) return null; // spent by a probe
      throw e;
    });
    if (setAside) this.record(p, routeSetAside(p.stamps, setAside, this.req.plan.agents[p.rec.agent]));
  }

  /**
   * Queues a routed row for its part file; once written it is counted, audited when it did not
   * reach the main output, and noted as paired values when the run keeps a live estimate.
   */
  private record(p: Prepared, r: Routed): void {
    const { i, stamps, old } = p;
    const line = r.audit && auditRow(auditKey(stamps.task, stamps.rollout), r.audit.cls, r.audit.status, this.ctx.info.attempt);
    this.recorder.record(i, r.target, r.line, (c, cp) => {
      r.count(c, cp);
      if (line !== null && cp.audit) noteRow(cp.audit, line);
      if (old) (cp.paired ??= {})[i] = [p.rec.agent, old.task, old.reward, r.reward ?? null];
    });
  }

  /** How the lanes ended: a lane's failure is thrown, the last rows are written, then the batch is held or its struck rows fail it. */
  private async settle(): Promise<void> {
    if (this.stops.error) throw this.stops.error;
    // The lanes do not wait for the disk: the last rows recorded are written (and counted) now.
    await this.recorder.flush();
    // Allowance spent with rows unfinished: they are held for the next launch, not failed (struck ones keep their strikes).
    if (this.allowance.spent() && this.unfinished() > 0) this.held = true;
    else if (this.strikes.struck.length > 0) throw this.strikes.failure();
  }

  /**
   * The attempt failed: the failure (and the strikes) must reach the next attempt, which lists it
   * in its result (Temporal's history keeps only the last failure of a retried activity). The
   * checkpoint sent covers every row answered (a failed write leaves it where it was). Rethrown
   * unless the worker shuts down or the run cancels the batch (`end` then hands back what is done).
   */
  private async failed(err: unknown): Promise<void> {
    await this.recorder.flush().catch(() => undefined);
    if (!this.ctx.cancellationSignal.aborted) {
      noteAttempt(this.checkpoint.audit!, failedAttemptLine(this.ctx.info.attempt, err, this.strikes.struck[0]?.error));
      this.beat();
    }
    if (!shuttingDown(this.ctx) && !cancelledByRun(this.ctx)) throw err;
  }

  private async close(): Promise<void> {
    clearInterval(this.beatTimer);
    this.stops.dispose();
    await this.rows.close();
    await this.recorder.close();
  }

  /** Hands the attempt back: unfinished at a worker shutdown, held, or published (finished or cancelled by the run). */
  private async end(): Promise<BatchResult> {
    const parts = { mainPart: this.files.mainPart, sidecarPart: this.files.sidecarPart };
    const carried = this.carried;
    // Its worker stops (Ctrl-C, `reverify worker` ending): not a failure. The batch is held with what
    // it finished, and launched again at once for the next worker, which goes on from there.
    if (shuttingDown(this.ctx) && this.unfinished() > 0)
      return holdBatch(this.files.held, this.req.batch, parts, this.recorder.snapshot(), { stopped: true, carried });
    // A batch that spent its allowance waits for more budget, unless the run is being cancelled.
    if (this.held && !cancelledByRun(this.ctx))
      return holdBatch(this.files.held, this.req.batch, parts, this.recorder.snapshot(), { stopped: false, carried });
    // Cancelled by the run, or finished: either way the rows done are handed back to be committed
    // (the unfinished rows of a cancelled batch are planned again by --resume).
    const result = await publish(this.req, this.files, this.recorder.checkpoint, this.unfinished(), carried);
    killAfterPublishing(this.req);
    return result;
  }

  /** Rows of the batch not done (written and counted) yet. */
  private unfinished(): number {
    return this.records.length - this.recorder.checkpoint.done.length;
  }

  /** Live progress, with which batch it is for the live views (src/contract/run-view.ts). */
  private beat(): void {
    this.ctx.heartbeat({ ...this.recorder.snapshot(), round: this.req.round, batch: this.req.batch });
  }
}

/** Attempts that sent no report before they ended (their worker died, or they failed before the first heartbeat). */
function noteLostAttempts(checkpoint: Checkpoint, attempt: number): void {
  const audit = checkpoint.audit!;
  if (audit.failedAttemptsMore !== 0) return;
  for (let a = lastNotedAttempt(audit) + 1; a < attempt; a++) noteAttempt(audit, lostAttemptLine(a));
}
