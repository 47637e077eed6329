import { checkWorkerBound } from '../config/worker-bound.js';
import type { Client } from '@temporalio/client';
import { ConfigError } from '../contract/errors.js';
import { catchAllWarning } from '../contract/messages.js';
import { rejudgesInRounds, type RunResult, type RunSpec } from '../contract/run-spec.js';
import { parseRunOptions, type RunOptions } from '../config/run-options.js';
import { runUiUrl, taskQueue, type TemporalTarget } from '../temporal/connection.js';
import { TemporalUnreachable, unreachableReason } from '../temporal/server-unreachable.js';
import { workflowIdForOutput } from '../temporal/workflow-id.js';
import { dropPlansAhead } from '../temporal/worker.js';
import { uploadConfigOf, wandbIncomplete, type UploadConfig } from '../upload/upload-config.js';
import { attemptCap, buildRun } from './build-spec.js';
import { endSummary, incompleteLines } from './end-summary.js';
import { stoppedEarlyLines } from './stopped-early.js';
import { followRun, type Followed } from './follow-run.js';
import { enforceGates, runGates } from './gate-ending.js';
import { writeHistoryAfterFailure, writeHistoryBeside } from './history-file.js';
import { type InProcessWorker, type ReadyWorker } from './in-process-worker.js';
import { connectRun } from './run-connect.js';
import { onInterrupt } from './interrupt.js';
import { startLocalWorkers, type LocalWorkers } from './local-workers.js';
import { startPlanAhead } from './plan-ahead-start.js';
import { DriverHold } from './run-hold.js';
import { aggregateCommandLine, isCancelledRun, MetricsMissingError, RunCancelledError } from './run-endings.js';
import { endReport, printSummary } from './run-summary.js';
import { checkedUnlessLive, sayAttached, startRun } from './run-start.js';
import { trace } from './trace.js';
import { isUserError, removeRunWithoutEffect } from './user-error-runs.js';

export interface RunCommandIo {
  out: (line: string) => void;
  bar: (text: string) => void;
  tty: boolean;
  /** Where the lines for people go with `--json` (stdout then carries only the JSON object); default stderr. */
  err?: (line: string) => void;
}

export const defaultIo: RunCommandIo = {
  out: (line) => process.stdout.write(line + '\n'),
  bar: (text) => process.stderr.write(text),
  tty: Boolean(process.stderr.isTTY),
};

const toStderr = (line: string) => process.stderr.write(line + '\n');

/** Options of `reverify run` that are not run options of the spec. */
export interface RunProcessOptions {
  /** Run an in-process worker (default); false leaves the work to `reverify worker` processes. */
  worker: boolean;
  /** `--workers N`: the in-process worker and N - 1 local `reverify worker` processes (default 1). */
  workers?: number;
  heartbeatTimeoutMs: number;
  /** `--json`: the end summary as one JSON object on stdout; every other line on stderr. */
  json?: boolean;
}

/** `--workers N`, checked against `--no-worker`. */
function workerCount(proc: RunProcessOptions): number {
  const workers = proc.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1)
    throw new ConfigError(`--workers: Input should be greater than or equal to 1 (got ${workers})`);
  if (workers > 1 && !proc.worker)
    throw new ConfigError(
      `--workers ${workers} starts workers beside this command's own, and --no-worker runs none here: drop one of them (or start \`reverify worker\` processes yourself)`,
    );
  checkWorkerBound(workers);
  return workers;
}

/**
 * The run's options and spec, its `--config` read once (the routing, the upload spec, the W&B
 * warning and the W&B upload at the end all come from that read).
 */
async function specOf(
  raw: unknown,
  proc: RunProcessOptions,
  io: RunCommandIo,
): Promise<{ opts: RunOptions; spec: RunSpec; upload: UploadConfig | null }> {
  const opts = parseRunOptions(raw);
  const cap = attemptCap(opts, process.env);
  if (cap.warning) io.out(cap.warning);
  const built = await buildRun(opts, { heartbeatTimeoutMs: proc.heartbeatTimeoutMs, maxAttempts: cap.value, worker: proc.worker });
  let spec = built.spec;
  // Test hook: continue-as-new every N batches (test/integration/run-history.test.ts); unset in real runs.
  const casAfter = process.env.REVERIFY_TEST_CONTINUE_AS_NEW_AFTER_BATCHES;
  if (casAfter) spec = { ...spec, continueAsNewAfterBatches: Number(casAfter) };
  // Test hook: a short deadline for /aggregate_metrics (test/integration/aggregation-hang.test.ts); unset in real runs.
  const aggregateTimeout = process.env.REVERIFY_TEST_AGGREGATE_TIMEOUT_MS;
  if (aggregateTimeout) spec = { ...spec, aggregateTimeoutMs: Number(aggregateTimeout) };
  if (spec.routing.catchAll !== null) io.out(catchAllWarning(spec.routing.catchAll));
  const upload = opts.upload && built.config !== null ? uploadConfigOf(built.config) : null;
  const wandbWarning = upload === null ? null : wandbIncomplete(upload);
  if (wandbWarning !== null) io.out(wandbWarning);
  return { opts, spec, upload };
}

/** The report's modules, loading while the run goes on, not after it. */
function loadReportModule(): Promise<typeof import('./report-command.js')> {
  const reportModule = import('./report-command.js');
  reportModule.catch(() => undefined);
  return reportModule;
}

/** The workers this command runs: the in-process one (and `--workers N - 1` local ones), stopped on Ctrl-C. */
interface CommandWorkers {
  worker: InProcessWorker | null;
  locals: LocalWorkers | null;
  removeInterrupt: () => void;
}

function startWorkers(ready: ReadyWorker | null, workers: number, target: TemporalTarget, spec: RunSpec, io: RunCommandIo): CommandWorkers {
  if (ready === null) {
    io.out(`No in-process worker: waiting for \`reverify worker\` processes on task queue '${taskQueue()}'.`);
    return { worker: null, locals: null, removeInterrupt: () => {} };
  }
  const worker = ready.start();
  trace('worker started');
  const locals = workers > 1 ? startLocalWorkers(workers - 1, target, io.out) : null;
  const removeInterrupt = onInterrupt(async () => {
    await Promise.all([worker.stop(), locals?.stop()]);
    return `Stopped. The run waits for a worker: run the same command again to continue it, or \`reverify cancel -o ${spec.outputPath}\` to end it.`;
  });
  return { worker, locals, removeInterrupt };
}

/** What the command knows when the run fails: whether it started the run, and whether the run said it began. */
interface RunFailureContext {
  client: Client;
  target: TemporalTarget;
  workflowId: string;
  spec: RunSpec;
  attached: boolean;
  announced: boolean;
  io: RunCommandIo;
}

/** The error `reverify run` ends with when its run fails (the history is written first). */
async function runFailure(err: unknown, c: RunFailureContext): Promise<unknown> {
  await writeHistoryAfterFailure(c.client, c.workflowId, c.spec, err, c.io.out);
  // Cancelled (`reverify cancel`, from this terminal or another): say so and how to go on (exit 4).
  if (isCancelledRun(err)) return new RunCancelledError(c.spec.outputPath);
  // A user error found before the run wrote anything: the run this command started is removed.
  if (!c.announced && !c.attached && isUserError(err)) await removeRunWithoutEffect(c.client, c.workflowId);
  // The server went away (killed, restarted): not a failed run. Say so, and how to go on.
  const reason = unreachableReason(err);
  if (reason !== null) return new TemporalUnreachable(c.target.address, reason, { output: c.spec.outputPath, embedded: c.target.embedded });
  return err;
}

/** What the end of a run needs from the command that followed it. */
interface RunEnd {
  built: { opts: RunOptions; upload: UploadConfig | null };
  spec: RunSpec;
  running: CommandWorkers;
  client: Client;
  target: TemporalTarget;
  workflowId: string;
  ui: string | null;
  reportModule: ReturnType<typeof loadReportModule>;
  proc: RunProcessOptions;
  stdio: RunCommandIo;
  io: RunCommandIo;
}

/**
 * The end of a run that ended well: the workers released, the history file and the report
 * written one after the other, then the summary (with the uploads the run made: MLflow and W&B), the `Incomplete:` lines and the `--json` object.
 */
async function endOfRun(followed: Followed, e: RunEnd): Promise<RunResult> {
  const { opts } = e.built;
  // The run is over: the worker's threads, connection and heaps are released while the history
  // and the report are written, not after them. Awaited again in `finally`.
  void e.running.worker?.stop().catch(() => undefined);
  void e.running.locals?.stop();
  // The history file, then the report (which reads the history from the server, not from the
  // file): one after the other, so that the command's memory is the larger of the two, not their
  // sum (at 10^7 rows: 535 MiB side by side). The report's line is printed in the summary.
  await writeHistoryBeside(e.client, e.workflowId, followed.result.outputs.output, e.io.out);
  trace('history written');
  const report = await endReport(e.spec, followed.result, { client: e.client, target: e.target }, e.reportModule);
  trace('report written');
  printSummary(followed, e.ui, e.io, report);
  const result = followed.result;
  for (const line of stoppedEarlyLines(result)) e.io.out(line);
  for (const line of incompleteLines(result, e.spec.maxAttempts ?? 1, e.spec.atif !== undefined)) e.io.out(line);
  const gates = runGates(opts.failIf, result.estimate);
  if (e.proc.json) e.stdio.out(JSON.stringify({ ...endSummary(result, e.workflowId, e.ui), ...(gates.length > 0 ? { gates } : {}) }));
  // The rows are complete, the metrics are not: one line with the reason and the command that computes them (exit 2).
  if (result.aggregationError) {
    for (const g of gates) e.io.out(g.line);
    throw new MetricsMissingError(result, aggregateCommandLine(result.outputs.output, opts.configs, opts.servers));
  }
  // A gate that fails ends the command with its lines (exit 5, before 3).
  enforceGates(gates, e.io.out);
  return result;
}

/**
 * `reverify run`: validate everything that can be checked locally, start the workflow for this
 * output (or attach to the live one), run a worker unless told not to, follow progress, print
 * the summary (`exitStatusOf` its result: 0, or 3 with rollouts still missing from the score).
 * Throws `MetricsMissingError` (exit 2) when the rows are complete but the aggregate metrics could
 * not be computed, `RunCancelledError` (exit 4) when the run was cancelled.
 */
export async function runCommand(raw: unknown, proc: RunProcessOptions, stdio: RunCommandIo = defaultIo): Promise<RunResult> {
  const io: RunCommandIo = proc.json ? { ...stdio, out: stdio.err ?? toStderr } : stdio;
  const workers = workerCount(proc);
  const built = await specOf(raw, proc, io);
  const opts = built.opts;
  let spec = built.spec;
  // One run per output file, under any name of it (a hard-linked output is refused here).
  const workflowId = workflowIdForOutput(spec.outputPath);
  trace('spec built');
  // The plan is made while the command connects, checks and starts the run and the worker starts;
  // the run's plan activity takes it over (activities/plan-ahead.ts). Dropped when the command ends
  // without it (a server that cannot be reached, and `finally`).
  if (proc.worker) startPlanAhead(spec);
  const { target, client, close, workerReady } = await connectRun(proc.worker);
  let running: CommandWorkers = { worker: null, locals: null, removeInterrupt: () => {} };
  const state = { attached: true, announced: false };
  const hold = new DriverHold();
  try {
    const checked = await checkedUnlessLive(client, workflowId, spec, opts, proc, io, hold);
    trace('prechecked');
    spec = checked ?? spec;
    const { handle, existing } = await startRun(client, workflowId, spec);
    // Attached: the live run planned long ago.
    if (existing) await dropPlansAhead();
    state.attached = existing;
    trace('workflow started');
    const ui = runUiUrl(target, workflowId);
    const inForce = existing ? await sayAttached(handle, spec, workflowId, io) : spec;
    running = startWorkers(workerReady && (await workerReady), workers, target, spec, io);
    const reportModule = loadReportModule();
    // Said once the run has proven its plan and opened its outputs: a user error found while
    // planning (a bad line, an ATIF refusal) ends with its one line and no run left (runFailure).
    const onOutputsOpen = (output?: string) => {
      if (output) hold.takeLate(output, io.out);
      state.announced = true;
      if (!existing) io.out(`Started run ${workflowId}${ui ? ` — ${ui}` : ''}`);
      if (inForce.order === 'random') io.out(`Order: random (seed ${inForce.orderSeed})`);
      if (inForce.noiseSample)
        io.out(`Noise sample: ${inForce.noiseSample.rows} scored row(s) judged again at the end (seed ${inForce.noiseSample.seed})`);
    };
    const followed = await followRun(handle, {
      tty: io.tty,
      // Test hook: plain lines more often (test/integration/live-view.test.ts); unset in real runs.
      lineIntervalMs: Number(process.env.REVERIFY_TEST_PROGRESS_LINE_MS) || 10_000,
      out: io.out,
      bar: io.bar,
      attached: existing,
      deferred: rejudgesInRounds(inForce),
      onOutputsOpen,
    });
    trace('run ended');
    return await endOfRun(followed, { built, spec, running, client, target, workflowId, ui, reportModule, proc, stdio, io });
  } catch (err) {
    throw await runFailure(err, { client, target, workflowId, spec, io, ...state });
  } finally {
    running.removeInterrupt();
    // A worker made but never started (the run failed before it) is closed too.
    await Promise.all([(running.worker ?? (await workerReady?.catch(() => null)))?.stop(), running.locals?.stop()]);
    trace('worker stopped');
    await hold.release();
    await dropPlansAhead();
    await close();
    trace('client closed');
  }
}
