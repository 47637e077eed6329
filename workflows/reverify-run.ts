/**
 * The reverify run as one durable workflow (DESIGN.md "The run as a workflow"): guard, prepare,
 * plan, verify in a sliding window of batch activities, commit each batch exactly once, aggregate.
 * Deterministic: no I/O, no clocks, no randomness; rows never enter the history, only counts,
 * paths and committed lengths.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { ReverifyActivities } from '../activities/index.js';
import type { AgentCounts, BatchResult, OutputPaths, Phase, PlanSummary, Progress, RunResult, RunSpec } from '../src/contract/run-spec.js';
// Pure text functions (no I/O, no Node APIs): deterministic, so the workflow may use them.
import {
  computingAggregateMetrics,
  disableAggregationNotice,
  nothingToReverify,
  planning,
  recoveryWarning,
  seededSuccesses,
  verifyingWith,
} from '../src/contract/messages.js';
import { FailureType, TERMINAL_FAILURE_TYPES } from '../src/contract/failure-types.js';
import { adaptLimit } from './adaptive-limit.js';
import { progressQuery, setConcurrencyUpdate, setPausedUpdate } from './definitions.js';
import { windowShape } from './window.js';

/** Failure types that retrying cannot fix (src/contract/failure-types.ts). */
const TERMINAL_TYPES = TERMINAL_FAILURE_TYPES;

/** Replies of a run that, if all are 4xx rejections, stop it (the server or config is wrong). */
const REJECT_GUARD_REPLIES = 20;

/** An `/aggregate_metrics` reply that retrying cannot fix (a 4xx, a malformed 2xx): activities/aggregate-run.ts. */
const AGGREGATION_FAILED = FailureType.AggregationFailed;

/**
 * Attempts of the aggregate phase before the run gives up on the metrics (transport errors,
 * timeouts, 408/429/5xx); the rows are committed by then, so an outage of `/aggregate_metrics`
 * ends the run (exit 3) instead of holding it. With the intervals below: about 10 minutes of waiting.
 */
const AGGREGATION_MAX_ATTEMPTS = 10;
const AGGREGATION_RETRY = { initialIntervalMs: 5_000, maximumIntervalMs: 120_000 };

/**
 * Every activity's cancellation (`reverify cancel`) is waited for: the workflow learns when each
 * has really stopped, so nothing writes to the outputs or the work directory after the cleanup.
 */
const WAIT_CANCELLED = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED;

/**
 * Short activities. They heartbeat on a timer too: without a heartbeat timeout, a worker killed
 * in the middle of one (a commit, say) would be noticed only when startToClose runs out.
 */
const quick = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: TERMINAL_TYPES },
  cancellationType: WAIT_CANCELLED,
});

/** Activities that may run long on big files; they heartbeat, so a dead worker shows within 2 minutes. */
const long = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '12 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '2s', maximumInterval: '1 minute', nonRetryableErrorTypes: TERMINAL_TYPES },
  cancellationType: WAIT_CANCELLED,
});

/** The aggregate phase: like `long`, but it gives up after `AGGREGATION_MAX_ATTEMPTS` (see `finish`). */
const aggregation = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '12 hours',
  heartbeatTimeout: '2 minutes',
  retry: aggregationRetry(AGGREGATION_RETRY),
  cancellationType: WAIT_CANCELLED,
});

/** Cleanup after a cancellation: a few tries, so a broken disk cannot hold the cancelled run. */
const cleanup = proxyActivities<ReverifyActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5, nonRetryableErrorTypes: TERMINAL_TYPES },
});

/** A batch activity in flight: its rows and the `/verify` slots it holds. */
interface InFlight {
  rows: number;
  slots: number;
}

/** State carried across continue-as-new: counts, cursors and committed lengths; never rows. */
export interface RunState {
  phase: Phase;
  generation: number;
  /** The ceiling of `/verify` requests in flight (`--concurrency`, or set by `reverify control`). */
  concurrency: number;
  /** The limit in force, adapted to the verifier's health (see adaptive-limit.ts). */
  effective: number;
  baselineLatencyMs: number | null;
  /** Paused by an operator: no new batch starts; those in flight finish. */
  paused: boolean;
  outputs: OutputPaths | null;
  /** The plan of the current round. */
  plan: PlanSummary | null;
  /** Re-judgment round (0: the first pass). */
  round: number;
  /** Rows planned over all rounds so far (attempts). */
  planned: number;
  /** Judge failures committed in the current round. */
  roundJudgeFailed: number;
  /** Successful rows of --rollouts copied into the output (recovery mode). */
  seeded: number;
  forceWarning: string | null;
  messages: string[];
  /** Next batch to launch. */
  nextBatch: number;
  /** Lengths of the main output and the sidecar after the last recorded commit. */
  mainLength: number;
  sidecarLength: number;
  /** Part files of the last recorded commit, deleted by the next one. */
  obsolete: string[];
  totals: Omit<BatchResult, 'batch' | 'mainPart' | 'sidecarPart'>;
}

function initialState(spec: RunSpec): RunState {
  return {
    phase: 'guard',
    generation: 0,
    concurrency: spec.concurrency,
    effective: spec.concurrency,
    baselineLatencyMs: null,
    paused: false,
    outputs: null,
    plan: null,
    round: 0,
    planned: 0,
    roundJudgeFailed: 0,
    seeded: 0,
    forceWarning: null,
    messages: [],
    nextBatch: 0,
    mainLength: 0,
    sidecarLength: 0,
    obsolete: [],
    totals: { main: 0, failed: 0, dropped: 0, rejected: 0, judgeFailed: 0, perAgent: {}, throttled: 0, latencyMsSum: 0, latencyCount: 0 },
  };
}

function addCounts(into: RunState['totals'], b: BatchResult): void {
  into.main += b.main;
  into.failed += b.failed;
  into.dropped += b.dropped;
  into.rejected += b.rejected;
  into.judgeFailed += b.judgeFailed;
  into.throttled += b.throttled;
  into.latencyMsSum += b.latencyMsSum;
  into.latencyCount += b.latencyCount;
  for (const [agent, c] of Object.entries(b.perAgent)) {
    const t: AgentCounts = (into.perAgent[agent] ??= { done: 0, failed: 0, dropped: 0, rewardSum: 0 });
    t.done += c.done;
    t.failed += c.failed;
    t.dropped += c.dropped;
    t.rewardSum += c.rewardSum;
  }
}

/** Rethrows an activity's terminal failure as the workflow's own, keeping its one-line message. */
function asRunFailure(err: unknown): unknown {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type && TERMINAL_TYPES.includes(cause.type)) {
    return ApplicationFailure.nonRetryable(cause.message, cause.type);
  }
  return err;
}

/**
 * State carried by a continue-as-new from an older version of this workflow lacks the fields added
 * since: give them the values that reproduce the old behaviour, so the run goes on (and replays)
 * unchanged. Add a line here with every new field of RunState.
 */
function upgradeState(st: RunState): RunState {
  st.effective ??= st.concurrency;
  st.baselineLatencyMs ??= null;
  st.paused ??= false;
  st.totals.throttled ??= 0;
  st.totals.latencyMsSum ??= 0;
  st.totals.latencyCount ??= 0;
  return st;
}

export async function reverifyRun(spec: RunSpec, carried?: RunState): Promise<RunResult> {
  const st = carried ? upgradeState(carried) : initialState(spec);
  const inflight = new Map<number, InFlight>();
  setHandler(progressQuery, (): Progress => ({
    phase: st.phase,
    planned: st.planned,
    round: st.round,
    done: st.totals.main,
    failed: st.totals.failed,
    dropped: st.totals.dropped,
    rejected: st.totals.rejected,
    judgeFailed: st.totals.judgeFailed,
    inFlightRows: [...inflight.values()].reduce((a, b) => a + b.rows, 0),
    perAgent: st.totals.perAgent,
    messages: st.messages,
    outputs: st.outputs,
    generation: st.generation,
    concurrency: st.concurrency,
    effectiveConcurrency: st.effective,
    paused: st.paused,
  }));
  setHandler(
    setConcurrencyUpdate,
    (n: number) => {
      st.concurrency = n;
      st.effective = Math.min(st.effective, n);
      st.messages.push(`Concurrency ceiling set to ${n} by an operator`);
      return n;
    },
    {
      validator: (n: number) => {
        if (!Number.isInteger(n) || n < 1) throw new Error('concurrency must be an integer >= 1');
      },
    },
  );

  setHandler(setPausedUpdate, (paused: boolean) => {
    if (paused !== st.paused)
      st.messages.push(paused ? 'Paused by an operator: batches in flight finish, no new one starts' : 'Resumed by an operator');
    st.paused = paused;
    return paused;
  });

  try {
    if (!carried) await start(spec, st);
    do await verifyRound(spec, st, inflight);
    while (await nextRound(spec, st));
    return await finish(spec, st);
  } catch (err) {
    // Cancelled (`reverify cancel`): end cleanly. Runs cancelled before this existed ended at once.
    if (CancellationScope.current().consideredCancelled && patched('cancel-ends-cleanly')) throw await endCancelled(st, inflight, err);
    throw asRunFailure(err);
  }
}

/** Guard, prepare, plan, open the outputs, seed successes (first generation only). */
async function start(spec: RunSpec, st: RunState): Promise<void> {
  const rules = { overwrite: spec.overwrite, resume: spec.resume, append: spec.append, repairTruncated: spec.repairTruncated };
  let prefix: '' | 'unsafe_' = '';
  if (spec.judgeFailedOnly) {
    // Recovery skips the guard entirely and never prefixes (spec §4.3, §4.6).
    st.messages.push(recoveryWarning());
  } else {
    st.phase = 'guard';
    const guard = await quick.guardReverifyModes.executeWithOptions({ summary: 'guard: GET /reverify_mode' }, [
      spec.guardServers,
      spec.force,
      30_000,
    ]);
    st.forceWarning = guard.warning;
    if (guard.warning) st.messages.push(guard.warning);
    prefix = guard.prefix;
  }

  st.phase = 'prepare';
  const outputs = await quick.checkOutputs(spec.outputPath, prefix, rules, {
    inputsPath: spec.inputsPath,
    rolloutsPath: spec.rolloutsPath,
    judgeFailedOnly: spec.judgeFailedOnly,
  });
  st.outputs = outputs;

  st.phase = 'plan';
  st.messages.push(planning());
  const { messages: planMessages, ...plan } = await long.planRun.executeWithOptions(
    { summary: spec.judgeFailedOnly ? 'plan: judge failures of the --rollouts sidecar' : 'plan: join inputs and rollouts' },
    [
      {
        inputsPath: spec.inputsPath,
        rolloutsPath: spec.rolloutsPath,
        workDir: outputs.workDir,
        routing: spec.routing,
        limit: spec.limit,
        judgeFailedOnly: spec.judgeFailedOnly,
        resume: spec.resume,
        outputs,
        outputsCleared: spec.overwrite && !spec.resume && !spec.append,
        maxAttempts: spec.maxAttempts,
        repairTruncated: spec.repairTruncated,
      },
    ],
  );
  st.plan = plan;
  st.planned = plan.rows;
  const opened = await quick.openOutputs(outputs, rules);
  st.messages.push(...opened.messages);
  st.mainLength = opened.mainLength;
  st.sidecarLength = opened.sidecarLength;
  if (spec.judgeFailedOnly) {
    const seed = await long.seedSuccesses.executeWithOptions({ summary: 'seed: copy the successful rollouts' }, [
      {
        rolloutsPath: spec.rolloutsPath,
        output: outputs.output,
        workDir: outputs.workDir,
        planned: plan.files?.find((f) => f.path === spec.rolloutsPath),
      },
    ]);
    await appendParts(spec, st, [seed.part], [], 'commit seeded successes');
    st.seeded = seed.seeded;
    st.messages.push(seededSuccesses(seed.seeded, outputs.output));
  }
  st.messages.push(...planMessages);
  st.messages.push(plan.rows === 0 ? nothingToReverify() : verifyingWith(st.concurrency));
}

/**
 * Re-judgment (beyond NeMo Gym, which needs a human to run --resume again): after a round with
 * judge failures, wait on a durable timer (doubling each round), then plan the keys that may still
 * be attempted as the next round. Each failed attempt has left exactly one sidecar row, so the files
 * end up as a NeMo Gym run followed by repeated `--resume` runs would leave them.
 */
async function nextRound(spec: RunSpec, st: RunState): Promise<boolean> {
  // `rejudge` absent (a spec from before the flag existed) means on, so recorded runs replay the same.
  if (spec.rejudge === false || st.roundJudgeFailed === 0 || st.round + 1 >= (spec.maxAttempts ?? 1)) return false;
  const delayMs = spec.rejudgeDelayMs * 2 ** st.round;
  st.messages.push(
    `Re-judging: ${st.roundJudgeFailed} row(s) judge-failed in round ${st.round + 1}; ` +
      `round ${st.round + 2} (of at most ${spec.maxAttempts}) starts in ${Math.round(delayMs / 1000)}s`,
  );
  st.phase = 'rejudge-wait';
  await sleep(delayMs);
  const next = await long.planRound.executeWithOptions({ summary: `plan re-judgment round ${st.round + 2}` }, [
    { workDir: st.outputs!.workDir, round: st.round, plan: st.plan!, sidecar: st.outputs!.sidecar, maxAttempts: spec.maxAttempts },
  ]);
  if (next.rows === 0) return false;
  st.round++;
  st.plan = next;
  st.nextBatch = 0;
  st.roundJudgeFailed = 0;
  st.planned += next.rows;
  return true;
}

/** One round: the sliding window of verifyBatch activities, with commits as batches finish. */
async function verifyRound(spec: RunSpec, st: RunState, inflight: Map<number, InFlight>): Promise<void> {
  const plan = st.plan!;
  const outputs = st.outputs!;
  st.phase = 'verify';
  const batches = Math.ceil(plan.rows / spec.batchSize);
  const ready: BatchResult[] = [];
  const failed: { error?: Error } = {};
  let launchedThisGeneration = 0;
  let stopping = false;

  const shape = () => windowShape(st.effective, spec.batchSize, batches - st.nextBatch + inflight.size);
  const launch = (batch: number, slots: number) => {
    const from = batch * spec.batchSize;
    const to = Math.min(plan.rows, from + spec.batchSize);
    const replies = st.totals.main + st.totals.failed + st.totals.dropped;
    const rejectGuard = st.totals.rejected === replies && replies < REJECT_GUARD_REPLIES ? REJECT_GUARD_REPLIES - replies : 0;
    inflight.set(batch, { rows: to - from, slots });
    long.verifyBatch
      .executeWithOptions(
        {
          summary: `${st.round > 0 ? `re-judge round ${st.round + 1}: ` : ''}verify rows ${from}..${to - 1} (batch ${batch + 1}/${batches})`,
          heartbeatTimeout: spec.heartbeatTimeoutMs,
          // Through the task queue, never eagerly to the worker running the workflow: batches
          // spread over every `reverify worker` that polls the queue.
          allowEagerDispatch: false,
        },
        [
          {
            inputsPath: spec.inputsPath,
            plan: {
              planPath: plan.planPath,
              sourcePath: plan.sourcePath,
              agents: plan.agents,
              servers: plan.servers,
              recordBytes: plan.recordBytes,
              files: plan.files,
            },
            serverUrls: spec.routing.servers,
            workDir: outputs.workDir,
            round: st.round,
            batch,
            from,
            to,
            parallelism: slots,
            requestTimeoutMs: spec.requestTimeoutMs,
            rejectGuard,
            outputSidecar: outputs.sidecar,
          },
        ],
      )
      .then(
        (r) => ready.push(r),
        (err: Error) => (failed.error ??= err),
      )
      .finally(() => inflight.delete(batch));
  };

  // Slots held by batches in flight never exceed the concurrency: a batch starts only when its
  // share fits (with nothing in flight it always fits, since a share is at most the concurrency).
  const usedSlots = () => [...inflight.values()].reduce((a, b) => a + b.slots, 0);
  const canLaunch = () =>
    !stopping &&
    !st.paused &&
    failed.error === undefined &&
    st.nextBatch < batches &&
    usedSlots() + shape().parallelism <= st.effective &&
    (spec.continueAsNewAfterBatches === undefined || launchedThisGeneration < spec.continueAsNewAfterBatches);

  while (st.nextBatch < batches || inflight.size > 0 || ready.length > 0) {
    // The share is computed once per launch: the very value canLaunch() checked against the ceiling.
    const launchAll = () => {
      while (canLaunch()) {
        const checked = shape().parallelism;
        st.nextBatch++;
        // Runs recorded before this fix took the share after moving the cursor (which could exceed
        // the ceiling near the end of a round) and must replay that way.
        launch(st.nextBatch - 1, patched('share-checked-is-share-launched') ? checked : shape().parallelism);
        launchedThisGeneration++;
      }
    };
    launchAll();
    await condition(() => ready.length > 0 || canLaunch() || failed.error !== undefined || (stopping && inflight.size === 0));
    // Refill the window before committing, so freed slots do not wait for the commit's round trip.
    // (A later change: runs recorded before it commit first, and must replay that way.)
    if (patched('launch-before-commit')) launchAll();
    // Whatever finished is committed, even when the run is about to fail: committed rows are kept.
    if (ready.length > 0) await commit(spec, st, ready.splice(0, ready.length));
    if (failed.error) throw failed.error;
    const suggested = workflowInfo().continueAsNewSuggested;
    const byCount = spec.continueAsNewAfterBatches !== undefined && launchedThisGeneration >= spec.continueAsNewAfterBatches;
    if ((suggested || byCount) && st.nextBatch < batches) stopping = true;
    if (stopping && inflight.size === 0 && ready.length === 0) {
      await condition(allHandlersFinished);
      st.generation++;
      await continueAsNew<typeof reverifyRun>(spec, st);
    }
  }
}

/** Appends part files to the outputs exactly once and records the new lengths. */
async function appendParts(spec: RunSpec, st: RunState, mainParts: string[], sidecarParts: string[], summary: string): Promise<void> {
  // A commit is frequent: a worker killed in the middle of one is noticed as fast as in a batch.
  const heartbeatTimeout = Math.min(spec.heartbeatTimeoutMs, 30_000);
  const lengths = await quick.commitBatches.executeWithOptions({ summary, heartbeatTimeout }, [
    {
      outputs: st.outputs!,
      mainLength: st.mainLength,
      sidecarLength: st.sidecarLength,
      mainParts,
      sidecarParts,
      obsolete: st.obsolete,
    },
  ]);
  st.mainLength = lengths.mainLength;
  st.sidecarLength = lengths.sidecarLength;
  st.obsolete = [...mainParts, ...sidecarParts];
}

/** Commits finished batches and adds their counts. */
async function commit(spec: RunSpec, st: RunState, batches: BatchResult[]): Promise<void> {
  batches.sort((a, b) => a.batch - b.batch);
  await appendParts(
    spec,
    st,
    batches.map((b) => b.mainPart),
    batches.map((b) => b.sidecarPart),
    `commit ${st.round > 0 ? `round ${st.round + 1} ` : ''}batches ${batches.map((b) => b.batch + 1).join(',')}`,
  );
  for (const b of batches) {
    addCounts(st.totals, b);
    st.roundJudgeFailed += b.judgeFailed;
    // Shown by the progress line (`concurrency 8/32`), not as messages: it may change all day.
    ({ effective: st.effective, baselineLatencyMs: st.baselineLatencyMs } = adaptLimit(st, st.concurrency, b));
  }
}

/** Aggregate, clean up, and report. */
async function finish(spec: RunSpec, st: RunState): Promise<RunResult> {
  const outputs = st.outputs!;
  let metricsPath: string | null = null;
  let keyMetrics: RunResult['keyMetrics'] = [];
  let aggregationError: string | null = null;
  if (spec.disableAggregation) {
    st.messages.push(disableAggregationNotice());
  } else {
    st.phase = 'aggregate';
    st.messages.push(computingAggregateMetrics());
    try {
      const agg = await aggregation.aggregateRun.executeWithOptions(
        {
          summary: 'aggregate: POST /aggregate_metrics per agent',
          ...(spec.aggregateRetry ? { retry: aggregationRetry(spec.aggregateRetry) } : {}),
        },
        [
          {
            output: outputs.output,
            metrics: outputs.metrics,
            routing: spec.routing,
            timeoutMs: Math.max(spec.requestTimeoutMs, 3_600_000),
          },
        ],
      );
      metricsPath = agg.metricsPath;
      keyMetrics = agg.keyMetrics;
    } catch (err) {
      // Every row is committed by now: a failed aggregation ends the run with its outputs complete,
      // and the result says why (the CLI exits 3). Runs recorded before this failed instead.
      if (CancellationScope.current().consideredCancelled || !patched('aggregation-failure-ends-run')) throw err;
      aggregationError = aggregationFailure(err);
    }
  }
  await quick.removeWorkDir(outputs.workDir);
  st.phase = 'done';
  return {
    outputs,
    metricsPath,
    planned: st.planned,
    rounds: st.round + 1,
    seeded: st.seeded,
    done: st.totals.main,
    failed: st.totals.failed,
    dropped: st.totals.dropped,
    rejected: st.totals.rejected,
    judgeFailed: st.totals.judgeFailed,
    perAgent: st.totals.perAgent,
    keyMetrics,
    aggregationError,
    messages: st.messages,
    forceWarning: st.forceWarning,
  };
}

/** The aggregate phase's retry policy: bounded; replies that retrying cannot fix are not retried. */
function aggregationRetry(r: { initialIntervalMs: number; maximumIntervalMs: number }) {
  return {
    initialInterval: r.initialIntervalMs,
    backoffCoefficient: 2,
    maximumInterval: r.maximumIntervalMs,
    maximumAttempts: AGGREGATION_MAX_ATTEMPTS,
    nonRetryableErrorTypes: [...TERMINAL_TYPES, AGGREGATION_FAILED],
  };
}

/** The innermost message of a failure chain (an activity's own error, not "Activity task failed"). */
function innermostMessage(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  for (
    let cur: unknown = err instanceof ActivityFailure ? err.cause : null;
    cur instanceof Error;
    cur = (cur as { cause?: unknown }).cause
  ) {
    message = cur.message;
  }
  return message;
}

/** One line: why the aggregate phase failed, and whether it gave up retrying. */
function aggregationFailure(err: unknown): string {
  const message = innermostMessage(err);
  const gaveUp = err instanceof ActivityFailure && err.retryState === 'MAXIMUM_ATTEMPTS_REACHED';
  return gaveUp ? `${message}; gave up after ${AGGREGATION_MAX_ATTEMPTS} attempts` : message;
}

/** Phases in which the recorded lengths are the outputs' committed lengths (the outputs are open). */
const COMMITTING_PHASES: Phase[] = ['verify', 'rejudge-wait', 'aggregate', 'done'];

/**
 * A run cancelled by an operator (`reverify cancel`), whatever it waited on: wait until every batch
 * in flight has stopped (activities are cancelled with WAIT_CANCELLED: they see the cancellation at
 * their next heartbeat, or at once between retries), cut the outputs back to the last recorded
 * commit (a commit interrupted half-way may have left bytes past it), and remove the work directory:
 * the next run, with --resume, plans again from the outputs. Returns the failure that ends the
 * workflow as cancelled. A cleanup that fails is said in the messages; the run still ends cancelled.
 */
async function endCancelled(st: RunState, inflight: Map<number, InFlight>, err: unknown): Promise<unknown> {
  const phase = st.phase;
  st.phase = 'cancelling';
  st.messages.push(
    `Cancelling: ${inflight.size > 0 ? `waiting for the ${inflight.size} batch(es) in flight to stop, then ` : ''}` +
      'cutting the outputs back to the last commit and removing the work directory',
  );
  await CancellationScope.nonCancellable(async () => {
    await condition(() => inflight.size === 0);
    const outputs = st.outputs;
    if (outputs === null) return;
    try {
      if (COMMITTING_PHASES.includes(phase)) {
        await cleanup.commitBatches.executeWithOptions({ summary: 'cancel: cut the outputs back to the last recorded commit' }, [
          { outputs, mainLength: st.mainLength, sidecarLength: st.sidecarLength, mainParts: [], sidecarParts: [], obsolete: [] },
        ]);
      }
      await cleanup.removeWorkDir.executeWithOptions({ summary: 'cancel: remove the work directory' }, [outputs.workDir]);
    } catch (cleanupErr) {
      st.messages.push(
        `Cancelled, but the cleanup failed: ${innermostMessage(cleanupErr)}; run the same command with --resume to continue`,
      );
    }
  });
  return isCancellation(err) ? err : new CancelledFailure('the run was cancelled');
}
