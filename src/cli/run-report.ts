/**
 * What `reverify status` and `reverify list` know about one run: read from the Temporal server
 * (describe, the progress query, the task queue's pollers, a finished run's result), as one plain
 * object that is printed as lines or as JSON.
 */
import type { UnresolvedRejudgment } from './unresolved-rejudgments.js';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Coverage } from '../contract/coverage.js';
import type { RunEstimateView } from '../contract/estimate-view.js';
import type { NoiseSampleView } from '../contract/run-result.js';
import type { StoppedEarly } from '../contract/stop-rules.js';
import type { AgentCounts, Progress, RunResult } from '../contract/run-spec.js';
import { endSummary, type EndSummary } from './end-summary.js';
import { describeFailure } from './exit-codes.js';
import { etaSeconds, type RunView } from '../contract/run-view.js';
import { readLive } from './live-state.js';
import { RateMeter } from './progress-view.js';
import { isCancelledRun } from './run-endings.js';

/** A live run's state: the same view as the terminal's progress line (src/contract/run-view.ts). */
export interface LiveReport {
  phase: Progress['phase'];
  /** Round, from 1: the latest started. */
  round: number;
  /** The oldest round still running, from 1, when older than `round` (re-judgment streams into the first pass). */
  oldestRound?: number;
  /** Attempts planned over all rounds, and answered so far (in running batches too, by their checkpoints). */
  planned: number;
  finished: number;
  /** Scored, routed to the failures sidecar, not persisted (in running batches too). */
  done: number;
  failed: number;
  dropped: number;
  /** Rows whose `/verify` request may be in flight: at most the concurrency in force. */
  inFlight: number;
  /** Rows per second over the sampling window (null: not sampled, not verifying). */
  ratePerSecond: number | null;
  etaSeconds: number | null;
  concurrency: number;
  effectiveConcurrency: number;
  paused: boolean;
  /** Paused because its request budget is spent (`--max-requests`). */
  budgetPaused: boolean;
  /** `/verify` requests made (in running batches too), and the budget (null: none); null: a run of an earlier version. */
  requests: { used: number; max: number | null } | null;
  /** Committed rows per agent. */
  perAgent: Record<string, AgentCounts>;
  /** The live paired estimate (docs/statistics.md; null: none). */
  estimate: RunEstimateView | null;
  /** `--noise-sample`: the judge noise floor so far (absent: none asked, or not begun). */
  noise?: NoiseSampleView;
  /** A `--stop-when` rule fired (null: none): which, at how many rows, and the batches in flight still finishing. */
  stoppedEarly: (StoppedEarly & { batchesInFlight: number }) | null;
}

export interface RunReport {
  workflowId: string;
  /** The run (execution) this report describes: the latest of its continue-as-new chain. */
  runId: string;
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
  /** How many `reverify run` invocations wrote the output (status only: each started its workflow again). */
  invocations?: number;
  /** Re-judgments admitted and not settled (status only; absent for a completed run). */
  unresolvedRejudgments?: UnresolvedRejudgment[];
}

/** The output path of a run from its start summary (`reverify <path>`, set by run-command.ts). */
export function outputOfSummary(summary: string | undefined): string | null {
  return summary?.startsWith('reverify ') ? summary.slice('reverify '.length) : null;
}

/**
 * A poller not seen for this long has gone (a worker's long poll is renewed at least every minute;
 * the server keeps an exited worker in its list for minutes).
 */
export const POLLER_GONE_MS = 90_000;

/** Distinct worker identities polling a task queue for workflow or activity tasks, seen recently. */
export async function workersPolling(client: Client, taskQueue: string, now = Date.now()): Promise<number> {
  const ids = new Set<string>();
  // TaskQueueType: 1 workflow tasks, 2 activity tasks (temporal.api.enums.v1).
  for (const taskQueueType of [1, 2]) {
    const res = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType,
    });
    for (const p of res.pollers ?? []) if (seenSince(p.lastAccessTime, now - POLLER_GONE_MS)) ids.add(p.identity ?? '');
  }
  return ids.size;
}

/** True when a poller's last access (a protobuf timestamp; absent: unknown, counted) is at or after `since`. */
export function seenSince(
  at: { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined,
  since: number,
): boolean {
  if (!at || at.seconds === null || at.seconds === undefined) return true;
  const seconds = typeof at.seconds === 'number' ? at.seconds : at.seconds.toNumber();
  return seconds * 1000 + Math.floor((at.nanos ?? 0) / 1e6) >= since;
}

export function liveReport(p: Progress, v: RunView, rate: number | null): LiveReport {
  return {
    phase: p.phase,
    round: p.round + 1,
    ...(p.oldestRound !== undefined && p.oldestRound < p.round ? { oldestRound: p.oldestRound + 1 } : {}),
    planned: v.planned,
    finished: v.answered,
    done: v.scored,
    failed: v.failed,
    dropped: v.notPersisted,
    inFlight: v.inFlight,
    ratePerSecond: rate === null ? null : Math.round(rate * 10) / 10,
    etaSeconds: rate === null ? null : etaSeconds(v, rate),
    concurrency: p.concurrency,
    effectiveConcurrency: p.effectiveConcurrency,
    paused: p.paused,
    budgetPaused: p.budgetPaused ?? false,
    requests: p.requests ? v.requests : null,
    perAgent: p.perAgent,
    estimate: p.estimate ?? null,
    ...(p.noise ? { noise: p.noise } : {}),
    stoppedEarly: p.stoppedEarly ? { ...p.stoppedEarly, batchesInFlight: p.running?.length ?? 0 } : null,
  };
}

/** The live run's view, read twice `sampleMs` apart for its rate (once when not verifying). */
async function sampleLive(handle: WorkflowHandle, sampleMs: number): Promise<LiveReport | null> {
  const first = await readLive(handle, 2000);
  if (!first.progress || !first.view) return null;
  if (first.progress.phase !== 'verify' || sampleMs <= 0) return liveReport(first.progress, first.view, null);
  const meter = new RateMeter();
  meter.add(Date.now(), first.view.answered);
  await new Promise((r) => setTimeout(r, sampleMs));
  const second = await readLive(handle, 2000);
  if (!second.progress || !second.view) return liveReport(first.progress, first.view, null);
  meter.add(Date.now(), Math.max(first.view.answered, second.view.answered));
  return liveReport(second.progress, second.view, meter.perSecond());
}

/**
 * One run's report: the workflow's latest run, or the run `runId` (an earlier invocation of the
 * same output, `list`), started at `startedAt` (the first run of its continue-as-new chain; default
 * its own start). `sampleMs`/`pollers`: sample the rate of a live run and ask its pollers (status);
 * list asks less of each run.
 */
export async function runReport(
  client: Client,
  workflowId: string,
  uiUrl: string | null,
  opts: { sampleMs: number; pollers: boolean; runId?: string; startedAt?: Date },
): Promise<RunReport> {
  const handle = client.workflow.getHandle(workflowId, opts.runId);
  const desc = await handle.describe();
  const state = desc.status.name;
  const closed = desc.closeTime ?? null;
  const started = opts.startedAt ?? desc.startTime;
  const report: RunReport = {
    workflowId,
    runId: desc.runId,
    output: outputOfSummary(await desc.staticSummary()),
    state,
    started: started.toISOString(),
    closed: closed?.toISOString() ?? null,
    durationSeconds: Math.round(((closed ?? new Date()).getTime() - started.getTime()) / 1000),
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
