import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { auditKey, auditRow, lastNotedAttempt, lostAttemptLine, noteAttempt, noteRow } from '../src/contract/batch-audit.js';
import { FailureType } from '../src/contract/failure-types.js';
import { stampsFromPayload, type Stamps } from '../src/contract/outcome.js';
import { verifyRequest } from '../src/contract/payload.js';
import { operationId } from '../src/contract/rejudgment.js';
import type { BatchResult } from '../src/contract/run-spec.js';
import { LEGACY_PLAN_RECORD_BYTES, readPlanRange, type PlanRecord } from '../src/planning/plan-file.js';
import { settleReply } from '../src/verifier/client.js';
import { VerifierUnavailableError } from '../src/verifier/errors.js';
import { DEFAULT_VERIFY_RETRY } from '../src/verifier/retry-policy.js';
import { verifyWithRetries } from '../src/verifier/verify-with-retries.js';
import type { ActivityDeps } from './deps.js';
import { failFastOnUserError } from './user-errors.js';
import { AllowanceSpent, RequestAllowance } from './verify-batch/allowance.js';
import { atifPayload } from './verify-batch/atif-payload.js';
import { cancelledByRun, failedAttemptLine, shuttingDown } from './verify-batch/attempt-ends.js';
import { batchFiles, killAfterPublishing, publish } from './verify-batch/batch-files.js';
import { BatchRecorder } from './verify-batch/batch-recorder.js';
import { resumeCheckpoint, rowsOf, type Checkpoint } from './verify-batch/checkpoint.js';
import { heldCheckpoint, holdBatch } from './verify-batch/held.js';
import { rowPlace, sidecarPathOf } from './verify-batch/planned-rows.js';
import { RowWindows } from './verify-batch/row-windows.js';
import { loneRowFailure, serverAnswersOthers } from './verify-batch/probe.js';
import type { ReplyCounts } from './verify-batch/server-replies.js';
import { RejectGuard } from './verify-batch/reject-guard.js';
import type { VerifyBatchRequest } from './verify-batch/request.js';
import { verifyRequestBytes } from './verify-batch/payload-bytes.js';
import { routeReply, routeSetAside, type Routed } from './verify-batch/route-reply.js';
import { routeReplyBytes } from './verify-batch/route-reply-bytes.js';
import { runPooledLanes, type Recording } from './verify-batch/lanes.js';
import { laneGroup } from './verify-batch/lane-pool.js';

export type { VerifyBatchRequest } from './verify-batch/request.js';

/**
 * Activity attempts in which a row's `/verify` must exhaust its retries (a 5xx, a reset, a
 * timeout: anything but throttling) while the same server answers another row of the batch,
 * before the row is written to the sidecar as `transient`.
 */
const ROW_FAILURE_STRIKES = 3;

/**
 * When the run is cancelled (`reverify cancel`), the batch starts no new row and gives the
 * requests already in flight this long to answer (their verdicts are paid for), then hands back
 * what it finished: the workflow commits it before the run ends.
 */
export const CANCEL_GRACE_MS = 10_000;

/**
 * Verify phase: one batch of plan rows. Reads its rows by offset, each proven to be the planned
 * bytes (planned-rows.ts); sends each payload (spec §4.7.3) to `/verify` with retries (transport
 * errors, timeouts, 408/429/5xx, with backoff; when they persist the activity fails and Temporal
 * retries it later, keeping the rows already done through the heartbeat checkpoint); routes each
 * result (route-reply.ts) into the batch's part files (batch-recorder.ts), and publishes them
 * atomically. Returns counts only; the workflow commits the parts.
 */
export function verifyBatch(deps: ActivityDeps) {
  return (req: VerifyBatchRequest): Promise<BatchResult> => failFastOnUserError(() => runBatch(deps, req));
}

/** A row ready to send (lanes.ts prepares it while the lane's previous request is in flight). */
interface Prepared {
  /** Its index in the batch's records. */
  i: number;
  rec: PlanRecord;
  /** The `/verify` body, as text or as its bytes (`payload-bytes.ts`). */
  payload: string | Buffer;
  stamps: Stamps;
  atif: boolean;
  /** In a re-judgment, the source row as read: the saved row of the verdict it settles. */
  saved?: string;
}

/** A row this attempt gave a strike (its failure is its own: the server answers others). */
interface Struck {
  row: number;
  error: VerifierUnavailableError;
  stamps: Stamps;
}

async function runBatch(deps: ActivityDeps, req: VerifyBatchRequest): Promise<BatchResult> {
  const ctx = Context.current();
  const files = batchFiles(req);
  // A previous attempt finished but its completion was lost: its published result stands.
  if (existsSync(files.result)) return JSON.parse(await readFile(files.result, 'utf8')) as BatchResult;

  // A retried attempt goes on from its heartbeat; a batch launched again after it was held, from its held checkpoint.
  const details: unknown = ctx.info.heartbeatDetails ?? (await heldCheckpoint(files.held));
  const checkpoint = await resumeCheckpoint(details, files.mainPartial, files.sidecarPartial);
  checkpoint.requestsUsed = (details as Checkpoint | undefined)?.requestsUsed ?? 0;
  const audit = checkpoint.audit!;
  // Rows answered by earlier attempts or launches: the report's throughput counts them where they were answered.
  const carried = rowsOf(checkpoint.counts);
  // Attempts that sent no report before they ended (their worker died, or they failed before the first heartbeat).
  if (audit.failedAttemptsMore === 0)
    for (let a = lastNotedAttempt(audit) + 1; a < ctx.info.attempt; a++) noteAttempt(audit, lostAttemptLine(a));
  const records = await readPlanRange(req.plan.planPath, req.from, req.to, req.plan.recordBytes ?? LEGACY_PLAN_RECORD_BYTES);
  const doneSet = new Set(checkpoint.done);
  const todo = records.map((_, i) => i).filter((i) => !doneSet.has(i));
  // Read a window at a time ahead of the lanes, with a few large reads each (the batch's source
  // rows are neighbours), every row proven before it is sent (row-windows.ts). The first window,
  // one row per lane, is read while the part files are opened.
  const rows = new RowWindows(req, records, todo, { firstRows: req.parallelism });
  rows.readAhead();
  const allowance = new RequestAllowance(checkpoint, req.allowance);
  const http = deps.verifier(req.requestTimeoutMs);
  // Every reply is counted for its server: a row alone in its batch is probed by the others (server-replies.ts).
  const client = deps.replies.client(allowance.client(http));
  const recorder = await BatchRecorder.open(files.mainPartial, files.sidecarPartial, checkpoint).catch(async (err: unknown) => {
    await rows.close();
    throw err;
  });
  // Which batch it is, for the live views (src/contract/run-view.ts).
  const beat = () => ctx.heartbeat({ ...recorder.snapshot(), round: req.round, batch: req.batch });
  // Every second (the worker sends at most one in 2 s, see src/temporal/worker.ts): live progress.
  const beatTimer = setInterval(beat, Math.min(1000, (ctx.info.heartbeatTimeoutMs ?? 30000) / 3));
  // The first lane that fails stops the others: their requests are aborted and nothing more starts.
  const stop = new AbortController();
  // Cancelled by the run: drain (no new row; the requests in flight get CANCEL_GRACE_MS), then
  // abort. Any other cancellation (worker shutdown, heartbeat timeout) aborts at once.
  const hard = new AbortController();
  const drain = { started: false, timer: undefined as NodeJS.Timeout | undefined };
  ctx.cancellationSignal.addEventListener('abort', () => {
    if (!cancelledByRun(ctx)) return hard.abort(ctx.cancellationSignal.reason);
    drain.started = true;
    drain.timer = setTimeout(() => hard.abort(ctx.cancellationSignal.reason), CANCEL_GRACE_MS);
  });
  const signal = AbortSignal.any([hard.signal, stop.signal]);
  setMaxListeners(0, signal); // every request in flight listens to it
  const guard = new RejectGuard(req.rejectGuard);
  // The row the server last answered 2xx in this attempt (a known-good probe), and the rows struck.
  let lastAnswered: number | null = null;
  const struck: Struck[] = [];
  let held = false;

  /** Row `todo[k]` ready to send: read, its payload built (on the rows' bytes when it can: payload-bytes.ts). */
  const prepareRow = async (k: number): Promise<Prepared> => {
    const i = todo[k];
    const rec = records[i];
    const row = await rows.row(k);
    // A re-judgment saves the row it settles; its window is gone by the time the row is answered.
    const saved = req.operation === undefined ? undefined : row.source();
    if (req.plan.inputFormat === 'atif') {
      const input = row.input();
      const atif = await atifPayload(req.plan.sourcePath, rec, saved ?? row.source(), input);
      return { i, rec, payload: atif.payload, stamps: { ...stampsFromPayload(input), atifProvenance: atif.provenance }, atif: true, saved };
    }
    const gym =
      (saved === undefined ? verifyRequestBytes(row.inputBytes(), row.sourceBytes()) : null) ??
      verifyRequest(row.input(), saved ?? row.source());
    return { i, rec, payload: gym.payload, stamps: gym.stamps, atif: false, saved };
  };

  /**
   * Sends a prepared row; returns what records its result, or nothing when there is nothing to
   * record (a failure of this row alone becomes a strike, recorded here when it sets the row aside;
   * a spent allowance leaves the row unfinished: the batch is held).
   */
  const sendRow = async ({ i, rec, payload, stamps, atif, saved }: Prepared): Promise<Recording> => {
    const agent = req.plan.agents[rec.agent];
    const server = req.plan.servers[rec.server];
    const url = req.serverUrls[server];
    const started = performance.now();
    let throttled = 0;
    const mark = deps.replies.mark(url);
    let reply;
    try {
      reply = await verifyWithRetries(client, url, payload, {
        ...DEFAULT_VERIFY_RETRY,
        signal,
        onRetry: (r) => {
          // Draining for a cancellation: no retries (a failing server would only hold the run up).
          if (drain.started) hard.abort(ctx.cancellationSignal.reason);
          if (r.status === 429 || r.status === 503) throttled++;
        },
      });
    } catch (err) {
      if (err instanceof AllowanceSpent) return;
      const setAside = await strike(err, i, rec, stamps, url, mark).catch((e: unknown) => {
        if (e instanceof AllowanceSpent) return null; // spent by a probe
        throw e;
      });
      if (setAside) recordRouted(i, routeSetAside(stamps, setAside, agent), stamps);
      return;
    }
    if (reply.kind === 'ok') lastAnswered = i;
    const rejudgment =
      req.operation === undefined || saved === undefined
        ? undefined
        : {
            opId: operationId(req.operation, stamps.task, stamps.rollout),
            judged: typeof payload === 'string' ? payload : payload.toString('utf8'),
            saved,
          };
    const facts = { agent, planIndex: req.from + i, latencyMs: performance.now() - started, throttled, atif, rejudgment };
    return () => {
      // The common 2xx reply is routed on its bytes (route-reply-bytes.ts); any other is parsed.
      const routed = reply.kind === 'ok' ? routeReplyBytes(reply.body, stamps, facts, req.retry ?? {}) : null;
      if (routed !== null) {
        guard.observe(reply, server, url);
        return recordRouted(i, routed, stamps);
      }
      const settled = settleReply(reply);
      guard.observe(settled, server, url);
      recordRouted(i, routeReply(settled, stamps, facts, req.retry), stamps);
    };
  };

  const recordRouted = (i: number, r: Routed, stamps: Stamps) => {
    const line = r.audit && auditRow(auditKey(stamps.task, stamps.rollout), r.audit.cls, r.audit.status, ctx.info.attempt);
    return recorder.record(i, r.target, r.line, (c, cp) => {
      r.count(c, cp);
      if (line !== null && cp.audit) noteRow(cp.audit, line);
    });
  };

  /**
   * After a row's retries are spent: throttling (429), or an outage (every row failing, the probe
   * too), fails the attempt (rethrown: Temporal retries it later, without bound). Otherwise the row
   * gets a strike; returns its error when it has all its strikes (the row is then set aside). A row
   * alone in its batch is probed by what the server answered this process since `mark` (probe.ts).
   */
  const strike = async (
    err: unknown,
    i: number,
    rec: PlanRecord,
    stamps: Stamps,
    url: string,
    mark: ReplyCounts,
  ): Promise<VerifierUnavailableError | null> => {
    if (!(err instanceof VerifierUnavailableError) || err.lastStatus === 429) throw err;
    const send = (body: string) => client.verifyOnce(url, body, signal);
    const alone = () => loneRowFailure(deps.replies.since(url, mark), err.tries, () => http.answers(url, signal));
    if (!(await serverAnswersOthers(req, records, i, lastAnswered, send, alone))) throw err;
    const strikes = (checkpoint.strikes[i] = (checkpoint.strikes[i] ?? 0) + 1);
    if (strikes < ROW_FAILURE_STRIKES) {
      struck.push({ row: i, error: err, stamps });
      return null;
    }
    ctx.log.warn(
      `${rowPlace(req, rec, stamps)}: /verify failed ${strikes} times (last: ${err.lastReason}) while the server answered other rows; ` +
        `written to ${sidecarPathOf(req)} as transient (--resume tries it again)`,
    );
    return err;
  };

  const first: { error?: Error } = {};
  const fail = (err: Error) => {
    first.error ??= err;
    stop.abort();
  };
  try {
    // The lanes are pooled with the other batches of this round that this process runs (lane-pool.ts).
    await runPooledLanes(
      {
        rows: todo.length,
        lanes: req.parallelism,
        going: () => !signal.aborted && !drain.started && !allowance.spent(),
        prepare: prepareRow,
        send: sendRow,
        fail,
      },
      deps.lanes,
      laneGroup(ctx.info, req.round),
    );
    if (first.error) throw first.error;
    // The lanes do not wait for the disk: the last rows recorded are written (and counted) now.
    await recorder.flush();
    // Allowance spent with rows unfinished: they are held for the next launch, not failed (struck ones keep their strikes).
    if (allowance.spent() && recorder.checkpoint.done.length < records.length) held = true;
    else if (struck.length > 0) throw rowsFailing(req, records, checkpoint, struck);
  } catch (err) {
    // The failed attempt (and the strikes) must reach the next attempt, which lists it in its result:
    // Temporal's history keeps only the last failure of a retried activity.
    // The checkpoint sent covers every row answered (a failed write leaves it where it was).
    await recorder.flush().catch(() => undefined);
    if (!ctx.cancellationSignal.aborted) {
      noteAttempt(audit, failedAttemptLine(ctx.info.attempt, err, struck[0]?.error));
      beat();
    }
    if (!shuttingDown(ctx) && !cancelledByRun(ctx)) throw err;
  } finally {
    clearInterval(beatTimer);
    clearTimeout(drain.timer);
    await rows.close();
    await recorder.close();
  }
  const parts = { mainPart: files.mainPart, sidecarPart: files.sidecarPart };
  // Its worker stops (Ctrl-C, `reverify worker` ending): not a failure. The batch is held with what
  // it finished, and launched again at once for the next worker, which goes on from there.
  if (shuttingDown(ctx) && recorder.checkpoint.done.length < records.length)
    return holdBatch(files.held, req.batch, parts, recorder.snapshot(), { stopped: true, carried });
  // A batch that spent its allowance waits for more budget, unless the run is being cancelled.
  if (held && !cancelledByRun(ctx)) return holdBatch(files.held, req.batch, parts, recorder.snapshot(), { stopped: false, carried });
  // Cancelled by the run, or finished: either way the rows done are handed back to be committed
  // (the unfinished rows of a cancelled batch are planned again by --resume).
  const result = await publish(req, files, recorder.checkpoint, records.length - recorder.checkpoint.done.length, carried);
  killAfterPublishing(req);
  return result;
}

/** The retryable failure of an attempt that left struck rows: it names the first by file:line and key. */
function rowsFailing(req: VerifyBatchRequest, records: PlanRecord[], checkpoint: Checkpoint, struck: Struck[]): ApplicationFailure {
  const { row, error, stamps } = struck[0];
  return ApplicationFailure.retryable(
    `${struck.length} row(s) of the batch failed while the server answered other rows; retried later, written to the sidecar ` +
      `as transient after ${ROW_FAILURE_STRIKES} attempts (${rowPlace(req, records[row], stamps)}, attempt ${checkpoint.strikes[row]}: ${error.message})`,
    FailureType.RowsFailing,
  );
}
