/**
 * What `reverify status` and `reverify list` know about one run: read from the Temporal server
 * (describe, the progress query, the task queue's pollers, a finished run's result), as one plain
 * object that is printed as lines or as JSON.
 */
import type { UnresolvedRejudgment } from './unresolved-rejudgments.js';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Coverage } from '../contract/coverage.js';
import type { AgentCounts, Progress, RunResult } from '../contract/run-spec.js';
import { endSummary, type EndSummary } from './end-summary.js';
import { describeFailure } from './exit-codes.js';
import { RateMeter, rowsFinished } from './progress-view.js';
import { queryProgress } from './query-progress.js';
import { isCancelledRun } from './run-endings.js';

export interface LiveReport {
  phase: Progress['phase'];
  round: number;
  /** Attempts planned over all rounds, and finished so far. */
  planned: number;
  finished: number;
  done: number;
  failed: number;
  dropped: number;
  inFlight: number;
  /** Rows per second over the sampling window (null: not sampled, not verifying). */
  ratePerSecond: number | null;
  etaSeconds: number | null;
  concurrency: number;
  effectiveConcurrency: number;
  paused: boolean;
  /** Paused because its request budget is spent (`--max-requests`). */
  budgetPaused: boolean;
  /** `/verify` requests made, and the budget (null: none); null: a run of an earlier version. */
  requests: { used: number; max: number | null } | null;
  perAgent: Record<string, AgentCounts>;
}

export interface RunReport {
  workflowId: string;
  /** The run's --output (from the workflow's start summary `reverify <path>`); null when unknown. */
  output: string | null;
  state: string;
  started: string;
  closed: string | null;
  durationSeconds: number;
  uiUrl: string | null;
  taskQueue: string;
  /** Workers polling the run's task queue (live runs only; null: not asked). */
  workersPolling: number | null;
  /** Live: the progress query's answer (null when no worker answers it). */
  live: LiveReport | null;
  /** Completed: the end summary, as `reverify run --json` prints it. */
  result: EndSummary | null;
  /** Failed: the line `reverify run` printed. */
  failure: string | null;
  /** The coverage counted from the run's files now, with what its coverage file saved (null: none). */
  coverage?: Coverage | null;
  /** Re-judgments admitted and not settled (status only; absent for a completed run). */
  unresolvedRejudgments?: UnresolvedRejudgment[];
}

/** The output path of a run from its start summary (`reverify <path>`, set by run-command.ts). */
export function outputOfSummary(summary: string | undefined): string | null {
  return summary?.startsWith('reverify ') ? summary.slice('reverify '.length) : null;
}

/** Distinct worker identities polling a task queue for workflow or activity tasks. */
export async function workersPolling(client: Client, taskQueue: string): Promise<number> {
  const ids = new Set<string>();
  // TaskQueueType: 1 workflow tasks, 2 activity tasks (temporal.api.enums.v1).
  for (const taskQueueType of [1, 2]) {
    const res = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType,
    });
    for (const p of res.pollers ?? []) ids.add(p.identity ?? '');
  }
  return ids.size;
}

function liveReport(p: Progress, rate: number | null): LiveReport {
  const finished = rowsFinished(p);
  return {
    phase: p.phase,
    round: p.round + 1,
    planned: p.planned,
    finished,
    done: p.done,
    failed: p.failed,
    dropped: p.dropped,
    inFlight: p.inFlightRows,
    ratePerSecond: rate === null ? null : Math.round(rate * 10) / 10,
    etaSeconds: rate && rate > 0 ? Math.round((p.planned - finished) / rate) : null,
    concurrency: p.concurrency,
    effectiveConcurrency: p.effectiveConcurrency,
    paused: p.paused,
    budgetPaused: p.budgetPaused ?? false,
    requests: p.requests ?? null,
    perAgent: p.perAgent,
  };
}

/** The live run's progress, sampled twice `sampleMs` apart for its rate (once when not verifying). */
async function sampleLive(handle: WorkflowHandle, sampleMs: number): Promise<LiveReport | null> {
  const first = await queryProgress(handle, 2000);
  if (!first) return null;
  if (first.phase !== 'verify' || sampleMs <= 0) return liveReport(first, null);
  const meter = new RateMeter();
  meter.add(Date.now(), rowsFinished(first));
  await new Promise((r) => setTimeout(r, sampleMs));
  const second = await queryProgress(handle, 2000);
  if (!second) return liveReport(first, null);
  meter.add(Date.now(), rowsFinished(second));
  return liveReport(second, meter.perSecond());
}

/**
 * One run's report. `detail`: ask the pollers and sample the rate of a live run, and read a
 * completed run's result (status); list asks less of each run.
 */
export async function runReport(
  client: Client,
  workflowId: string,
  uiUrl: string | null,
  opts: { sampleMs: number; pollers: boolean },
): Promise<RunReport> {
  const handle = client.workflow.getHandle(workflowId);
  const desc = await handle.describe();
  const state = desc.status.name;
  const closed = desc.closeTime ?? null;
  const report: RunReport = {
    workflowId,
    output: outputOfSummary(await desc.staticSummary()),
    state,
    started: desc.startTime.toISOString(),
    closed: closed?.toISOString() ?? null,
    durationSeconds: Math.round(((closed ?? new Date()).getTime() - desc.startTime.getTime()) / 1000),
    uiUrl,
    taskQueue: desc.taskQueue,
    workersPolling: null,
    live: null,
    result: null,
    failure: null,
  };
  if (state === 'RUNNING') {
    if (opts.pollers) report.workersPolling = await workersPolling(client, desc.taskQueue);
    report.live = await sampleLive(handle, opts.sampleMs);
  } else if (state === 'COMPLETED') {
    report.result = endSummary((await handle.result()) as RunResult, workflowId, uiUrl);
  } else if (state === 'FAILED') {
    report.failure = await handle.result().then(
      () => null,
      (err: unknown) => (isCancelledRun(err) ? null : describeFailure(err).line),
    );
  }
  return report;
}
