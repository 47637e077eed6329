import { createInProcessWorker, type InProcessWorker } from './in-process-worker.js';
import { startLocalWorkers, type LocalWorkers } from './local-workers.js';
import { checkWorkerBound } from '../config/worker-bound.js';
import { ConfigError } from '../contract/errors.js';
import { trace } from './trace.js';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { coverageReport } from '../contract/coverage-report.js';
import { coverageBlock } from '../contract/coverage.js';
import { coveragePath } from '../contract/file-names.js';
import { catchAllWarning, keyMetricsFor } from '../contract/messages.js';
import type { RunResult, RunSpec } from '../contract/run-spec.js';
import { parseRunOptions } from '../config/run-options.js';
import { connectClient, resolveTemporal, runUiUrl, taskQueue } from '../temporal/connection.js';
import { TemporalUnreachable, unreachableReason } from '../temporal/server-unreachable.js';
import { workflowIdForOutput } from '../temporal/workflow-id.js';
import type { reverifyRun } from '../../workflows/reverify-run.js';
import { attemptCap, buildRunSpec } from './build-spec.js';
import { withAttemptCap } from './attempt-cap.js';
import { differingOptionsLine, liveRunSpec } from './attach-options.js';
import { endSummary, incompleteLines, perAgentLines } from './end-summary.js';
import { followRun, type Followed } from './follow-run.js';
import { onInterrupt } from './interrupt.js';
import { precheckRun } from './precheck.js';
import { startPlanAhead } from './plan-ahead-start.js';
import { dropPlansAhead } from '../../activities/plan-ahead.js';
import type { ReportTemporal } from './report-command.js';
import { aggregateCommandLine, isCancelledRun, MetricsMissingError, RunCancelledError } from './run-endings.js';
import { outputSearchAttributes } from '../temporal/search-attributes.js';
import { isUserError, removeRunWithoutEffect } from './user-error-runs.js';
import { loadUploadConfig, wandbRefusal } from '../upload/upload-config.js';
import { uploadedLine } from './upload-command.js';
import { writeHistoryAfterFailure, writeHistoryBeside } from './history-file.js';

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

/**
 * What this run did, counted in rollouts (keys), not attempts: scored, still missing from the score
 * after every round (their last attempt is in the sidecar), not persisted; then the attempts.
 */
export function rolloutsLine(result: RunResult): string {
  const seeded = result.seeded > 0 ? `; ${result.seeded} successes seeded` : '';
  const rounds = result.rounds > 1 ? ` after ${result.rounds} rounds` : '';
  if (result.keys === undefined || result.missing === undefined) {
    // A run of an earlier version: attempts only.
    return `Rows: ${result.planned} verified${rounds}: ${result.done} to the main output, ${result.failed} to the failures sidecar, ${result.dropped} not persisted${seeded}`;
  }
  return (
    `Rollouts: ${result.keys} planned: ${result.done} scored, ${result.missing} still missing from the score${rounds}, ` +
    `${result.dropped} not persisted (${result.planned} attempts, ${result.failed} of them in the failures sidecar)${seeded}`
  );
}

/** Prints the end-of-run summary (spec §4.13, §4.14), NeMo Gym 0.7.0's coverage report and the UI link. */
export function printSummary({ result, routed }: Followed, uiUrl: string | null, io: RunCommandIo, reportLine: string | null = null): void {
  for (const { agent, keyMetrics } of result.keyMetrics) {
    io.out(keyMetricsFor(agent));
    io.out(JSON.stringify(keyMetrics, null, 2));
  }
  io.out(rolloutsLine(result));
  perAgentLines(result).forEach((line) => io.out(line));
  io.out(`Re-verified rollouts: ${result.outputs.output}`);
  io.out(`Failures: ${result.outputs.sidecar}`);
  io.out(`Aggregate metrics: ${result.metricsPath ?? 'None'}`);
  if (typeof result.scored === 'number' && result.missing !== undefined)
    coverageReport(result.scored, result.missing, routed, result.outputs.sidecar).forEach((line) => io.out(line));
  const upload = result.upload;
  if (upload?.warning)
    io.out(
      `Warning: ${upload.warning}; the outputs are complete: \`reverify upload -o ${result.outputs.output} --config ...\` uploads them later`,
    );
  else if (upload?.runId) io.out(uploadedLine(upload.runId, upload.rows, upload.metrics));
  if (result.coverage) coverageBlock(result.coverage, coveragePath(result.outputs.output)).forEach((line) => io.out(line));
  if (uiUrl) io.out(`Temporal UI: ${uiUrl}`);
  if (reportLine) io.out(reportLine);
  if (result.forceWarning) io.out(result.forceWarning);
}

/**
 * The run report (`reverify report`) of a run that ended well, written next to the outputs: its
 * line for the summary. A report that fails is a warning line, nothing more. ATIF inputs carry no
 * old rewards: no report (`reverify report --rollouts` can make one).
 */
async function endReport(
  spec: RunSpec,
  result: RunResult,
  temporal: ReportTemporal,
  reportModule: Promise<typeof import('./report-command.js')>,
): Promise<string | null> {
  if (spec.atif || result.aggregationError) return null;
  const output = spec.outputPath;
  try {
    const { html } = await (await reportModule).writeReport({ output }, temporal);
    return `Report: ${html}`;
  } catch (err) {
    const why = (err as Error).message.split('\n')[0];
    return `Warning: the run report was not written (${why}); \`reverify report -o ${output}\` writes it`;
  }
}

/**
 * `reverify run`: validate everything that can be checked locally, start the workflow for this
 * output (or attach to the live one), run a worker unless told not to, follow progress, print
 * the summary (`exitStatusOf` its result: 0, or 3 with rollouts still missing from the score). Throws `MetricsMissingError` (exit 2) when the rows are complete but the aggregate
 * metrics could not be computed, `RunCancelledError` (exit 4) when the run was cancelled.
 */
export async function runCommand(raw: unknown, proc: RunProcessOptions, stdio: RunCommandIo = defaultIo): Promise<RunResult> {
  const io: RunCommandIo = proc.json ? { ...stdio, out: stdio.err ?? toStderr } : stdio;
  const workers = proc.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1)
    throw new ConfigError(`--workers: Input should be greater than or equal to 1 (got ${workers})`);
  if (workers > 1 && !proc.worker)
    throw new ConfigError(
      `--workers ${workers} starts workers beside this command's own, and --no-worker runs none here: drop one of them (or start \`reverify worker\` processes yourself)`,
    );
  checkWorkerBound(workers);
  const opts = parseRunOptions(raw);
  const cap = attemptCap(opts, process.env);
  if (cap.warning) io.out(cap.warning);
  let spec: RunSpec = await buildRunSpec(opts, {
    heartbeatTimeoutMs: proc.heartbeatTimeoutMs,
    maxAttempts: cap.value,
    worker: proc.worker,
  });
  // One run per output file, under any name of it (a hard-linked output is refused here).
  const workflowId = workflowIdForOutput(spec.outputPath);
  // Test hook: continue-as-new every N batches (test/integration/run-history.test.ts); unset in real runs.
  const casAfter = process.env.REVERIFY_TEST_CONTINUE_AS_NEW_AFTER_BATCHES;
  if (casAfter) spec = { ...spec, continueAsNewAfterBatches: Number(casAfter) };
  // Test hook: a short deadline for /aggregate_metrics (test/integration/aggregation-hang.test.ts); unset in real runs.
  const aggregateTimeout = process.env.REVERIFY_TEST_AGGREGATE_TIMEOUT_MS;
  if (aggregateTimeout) spec = { ...spec, aggregateTimeoutMs: Number(aggregateTimeout) };
  if (spec.routing.catchAll !== null) io.out(catchAllWarning(spec.routing.catchAll));
  const wandbKeys = opts.upload && opts.configs.length > 0 ? (await loadUploadConfig(opts.configs)).wandbKeys : [];
  if (wandbKeys.length > 0) io.out(wandbRefusal(wandbKeys));
  trace('spec built');
  // The plan is made while the command connects, checks and starts the run and the worker starts;
  // the run's plan activity takes it over (activities/plan-ahead.ts). Dropped when the command ends
  // without it (below: a server that cannot be reached, and `finally`).
  if (proc.worker) startPlanAhead(spec);
  const target = await resolveTemporal().catch(async (err: unknown) => {
    await dropPlansAhead();
    throw err;
  });
  trace('temporal resolved');
  // The in-process worker (its connection, the workflow bundle) is made while the client checks and
  // starts the run: it is needed as soon as the run starts. It polls nothing until run() below.
  const workerReady = proc.worker ? createInProcessWorker(target) : null;
  workerReady?.catch(() => undefined);
  const { client, close } = await connectClient(target).catch(async (err: unknown) => {
    await (await workerReady?.catch(() => null))?.stop();
    await dropPlansAhead();
    throw err;
  });
  trace('client connected');
  let worker: InProcessWorker | null = null;
  let locals: LocalWorkers | null = null;
  let removeInterrupt = () => {};
  let announced = false;
  let attached = true;
  try {
    const existing = await client.workflow
      .getHandle(workflowId)
      .describe()
      .then((d) => d.status.name === 'RUNNING')
      .catch(() => false);
    trace('described');
    // Attached: the live run planned long ago.
    if (existing) await dropPlansAhead();
    if (!existing) {
      spec = await precheckRun(spec, { worker: proc.worker });
      const capped = await withAttemptCap(spec, opts, process.env);
      spec = capped.spec;
      capped.notices.forEach((line) => io.out(line));
    }
    trace('prechecked');
    attached = existing;
    let handle;
    try {
      handle = await client.workflow.start<typeof reverifyRun>('reverifyRun', {
        workflowId,
        taskQueue: taskQueue(),
        args: [spec],
        workflowIdConflictPolicy: 'USE_EXISTING',
        staticSummary: `reverify ${spec.outputPath}`,
        // Shown in the UI's list and `describe()`; no registration needed (a search attribute would be).
        memo: { output: spec.outputPath, inputs: spec.inputsPath, rollouts: spec.rolloutsPath },
        typedSearchAttributes: await outputSearchAttributes(client, spec.outputPath),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      handle = client.workflow.getHandle(workflowId);
    }
    trace('workflow started');
    const ui = runUiUrl(target, workflowId);
    if (existing) {
      io.out(`Attached to the live run for ${spec.outputPath} (workflow ${workflowId}); its own options apply.`);
      const own = await liveRunSpec(handle);
      const differ = own && differingOptionsLine(spec, own);
      if (differ) io.out(differ);
    }
    // Said once the run has proven its plan and opened its outputs: a user error found while
    // planning (a bad line, an ATIF refusal) ends with its one line and no run left (below).
    const announce = () => {
      announced = true;
      if (!existing) io.out(`Started run ${workflowId}${ui ? ` — ${ui}` : ''}`);
    };
    if (workerReady) {
      const w = (worker = (await workerReady).start());
      trace('worker started');
      const others = workers > 1 ? (locals = startLocalWorkers(workers - 1, target, io.out)) : null;
      removeInterrupt = onInterrupt(async () => {
        await Promise.all([w.stop(), others?.stop()]);
        return `Stopped. The run waits for a worker: run the same command again to continue it, or \`reverify cancel -o ${spec.outputPath}\` to end it.`;
      });
    } else {
      io.out(`No in-process worker: waiting for \`reverify worker\` processes on task queue '${taskQueue()}'.`);
    }
    // The report's modules load while the run goes on, not after it.
    const reportModule = import('./report-command.js');
    reportModule.catch(() => undefined);
    const followed = await followRun(handle, {
      tty: io.tty,
      // Test hook: plain lines more often (test/integration/live-view.test.ts); unset in real runs.
      lineIntervalMs: Number(process.env.REVERIFY_TEST_PROGRESS_LINE_MS) || 10_000,
      out: io.out,
      bar: io.bar,
      attached: existing,
      onOutputsOpen: announce,
    });
    trace('run ended');
    // The run is over: the worker's threads, connection and heaps are released while the history
    // and the report are written, not after them. Awaited again in `finally`.
    void worker?.stop().catch(() => undefined);
    void locals?.stop();
    // The report (which reads the history from the server, not from the file) is made while the
    // history file is written; its line is printed in the summary, after the history's.
    const report = endReport(spec, followed.result, { client, target }, reportModule);
    await writeHistoryBeside(client, workflowId, followed.result.outputs.output, io.out);
    trace('history written');
    printSummary(followed, ui, io, await report);
    trace('report written');
    const result = followed.result;
    for (const line of incompleteLines(result, spec.maxAttempts ?? 1, spec.atif !== undefined)) io.out(line);
    if (proc.json) stdio.out(JSON.stringify(endSummary(result, workflowId, ui)));
    // The rows are complete, the metrics are not: one line with the reason and the command that computes them (exit 2).
    if (result.aggregationError)
      throw new MetricsMissingError(result, aggregateCommandLine(result.outputs.output, opts.configs, opts.servers));
    return result;
  } catch (err) {
    await writeHistoryAfterFailure(client, workflowId, spec, err, io.out);
    // Cancelled (`reverify cancel`, from this terminal or another): say so and how to go on (exit 4).
    if (isCancelledRun(err)) throw new RunCancelledError(spec.outputPath);
    // A user error found before the run wrote anything: the run this command started is removed.
    if (!announced && !attached && isUserError(err)) await removeRunWithoutEffect(client, workflowId);
    // The server went away (killed, restarted): not a failed run. Say so, and how to go on.
    const reason = unreachableReason(err);
    if (reason !== null) throw new TemporalUnreachable(target.address, reason, { output: spec.outputPath, embedded: target.embedded });
    throw err;
  } finally {
    removeInterrupt();
    // A worker made but never started (the run failed before it) is closed too.
    await Promise.all([(worker ?? (await workerReady?.catch(() => null)))?.stop(), locals?.stop()]);
    trace('worker stopped');
    await dropPlansAhead();
    await close();
    trace('client closed');
  }
}
