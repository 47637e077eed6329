/**
 * The workflow's own logic (workflows/reverify-run.ts and the modules it imports), run for real on
 * the shared Temporal dev server with STUB activities: plain async functions of the
 * `ReverifyActivities` type that record what the workflow asked and answer what each test needs.
 * The real activities are covered by the other integration tests; here nothing touches a file or a
 * resources server, so each run takes a second or two and every decision of the workflow (window,
 * ceiling, commit order and lengths, continue-as-new, re-judgment timers, pause, failures) is seen
 * directly in the stubs' records, the workflow's result, its progress query and its history.
 *
 * Time skipping: `TestWorkflowEnvironment.createTimeSkipping()` downloads the Java test server from
 * temporal.download, which is unreachable here (it fails at once), and no installed package ships
 * it (temporal-notes §1.4). So this suite uses the shared dev server of test/global-setup.ts
 * through `createFromExistingServer`, and the durable timers of re-judgment run in real time with a
 * short `rejudgeDelayMs`.
 */
import { WorkflowFailedError, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { Context } from '@temporalio/activity';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReverifyActivities } from '../../activities/index.js';
import type { BatchResult, PairedUnit, PlanSummary, Progress, RunResult, RunSpec } from '../../src/contract/run-spec.js';
import { createRunEstimate, feedBatch, plannedOf, runEstimateView, type PlannedUnits } from '../../src/stats/run-estimate.js';
import { progressLine } from '../../src/cli/progress-view.js';
import { pairedUnits, type PairedRow } from '../../activities/verify-batch/paired-units.js';
import { cacheDir } from '../../src/temporal/connection.js';
import { coverageOf, emptyCounts } from '../../src/contract/coverage.js';
import { aggregateTimeoutMs } from '../../src/contract/aggregate-timeout.js';
import { workflowBundlePath } from '../../src/temporal/workflow-bundle.js';
import { encodePaired } from '../../src/contract/paired-wire.js';
import { CHECKPOINT_THROTTLE_MS } from '../../src/contract/checkpoint-interval.js';
import { progressQuery, setMaxRequestsUpdate, setPausedUpdate } from '../../workflows/definitions.js';
import type { reverifyRun } from '../../workflows/reverify-run.js';
import { useSharedTemporal } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('workflow-logic');

let env: TestWorkflowEnvironment;
let bundlePath: string;

beforeAll(async () => {
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: temporal.address, namespace: temporal.namespace });
  bundlePath = await workflowBundlePath(cacheDir());
});

afterAll(async () => {
  await env?.teardown();
});

type VerifyRequest = Parameters<ReverifyActivities['verifyBatch']>[0];
type CommitRequest = Parameters<ReverifyActivities['commitBatches']>[0];
type RoundRequest = Parameters<ReverifyActivities['planRound']>[0];
type AggregateRequest = Parameters<ReverifyActivities['aggregateRun']>[0];
type Lengths = { mainLength: number; sidecarLength: number };
type CoverageRequest = Parameters<ReverifyActivities['writeCoverage']>[0];

/** Lengths the stubbed `openOutputs` reports: not zero, so that their threading into the first commit shows. */
const OPENED: Lengths = { mainLength: 123, sidecarLength: 45 };
/** Rows the stubbed `openOutputs` finds in the main output (a resumed run). */
const ROWS_OPENED = 7;

interface StubOptions {
  /** Rows of the first round's plan. */
  rows: number;
  /** Runs inside each verifyBatch call before it answers: may wait, or throw. */
  beforeVerify?: (req: VerifyRequest) => Promise<void>;
  /** Runs inside each commitBatches call (1-based `n`) before it answers. */
  beforeCommit?: (req: CommitRequest, n: number) => Promise<void>;
  /** Judge failures a batch reports (the rest of its rows go to the main output). */
  judgeFailed?: (req: VerifyRequest) => number;
  /** How long before its return a batch with judge failures selected the last of them (`selectedAgoMs`). */
  selectedAgoMs?: (req: VerifyRequest) => number;
  /** Rows of the next round's plan, per planRound call (0-based) and its request. */
  nextRoundRows?: (call: number, req: RoundRequest) => number;
  /** Replaces the aggregate phase's answer (may throw). */
  aggregate?: (req: AggregateRequest, attempt: number) => Promise<{ metricsPath: string | null; keyMetrics: [] }>;
  /** Replaces the upload phase's opening of the MLflow run (may throw). */
  uploadOpen?: () => Promise<{ runId: string; experimentId: string; artifactUri: string }>;
  /** The live estimate (spec.confidence): the units counted from the plan, and a batch's paired values. */
  paired?: { planned: Record<string, PlannedUnits>; units: (req: VerifyRequest) => PairedUnit[] };
}

interface VerifyCall {
  req: VerifyRequest;
  /** Slots (`parallelism`) of all stubbed batches running when this one started, itself included. */
  slotsAtStart: number;
  startedAt: number;
  endedAt?: number;
}

/** Stub activities of one run and what they recorded. */
function stubActivities(o: StubOptions) {
  const rec = {
    guard: 0,
    checkOutputs: 0,
    planRun: 0,
    openOutputs: 0,
    verify: [] as VerifyCall[],
    runningSlots: 0,
    peakSlots: 0,
    runningBatches: 0,
    peakBatches: 0,
    commits: [] as Array<{ req: CommitRequest; returned: Lengths; at: number }>,
    planRounds: [] as Array<{ req: RoundRequest; at: number }>,
    roundPlans: [] as PlanSummary[],
    aggregates: [] as AggregateRequest[],
    removed: [] as string[],
    /** `/verify` requests the stubbed batches made (one per row), and rows done per `round:batch` across launches. */
    requests: 0,
    rowsDone: new Map<string, number>(),
    /** Every activity of the end of the run, in order: upload steps and aggregation. */
    ending: [] as string[],
    coverages: [] as CoverageRequest[],
    /** The requests of `recordUnstartedRows` (the rollouts a run never started, and why). */
    unstarted: [] as Array<Parameters<ReverifyActivities['recordUnstartedRows']>[0]>,
    /** Loans of lanes (`lendLanes`): when each started, with the batches launched and running then. */
    loans: [] as Array<{ lanes: number; round: number; launched: number; running: number }>,
  };
  let firstPlan: PlanSummary | null = null;

  const activities: ReverifyActivities = {
    guardReverifyModes: async () => {
      rec.guard++;
      return { prefix: '', warning: null };
    },
    checkOutputs: async (outputPath) => {
      rec.checkOutputs++;
      const stem = outputPath.replace(/\.jsonl$/, '');
      return {
        output: outputPath,
        sidecar: `${stem}_failures.jsonl`,
        metrics: `${stem}_aggregate_metrics.json`,
        workDir: `${stem}.reverify`,
      };
    },
    planRun: async (req) => {
      rec.planRun++;
      firstPlan = {
        planPath: `${req.workDir}/plan.bin`,
        attemptsPath: `${req.workDir}/plan.attempts.bin`,
        sourcePath: req.rolloutsPath,
        rows: o.rows,
        agents: ['agent_a'],
        servers: ['rs'],
        rowsPerAgent: { agent_a: o.rows },
        recordBytes: 48,
        keys: o.rows,
      };
      return { ...firstPlan, messages: [] };
    },
    openOutputs: async () => {
      rec.openOutputs++;
      return { ...OPENED, mainRows: ROWS_OPENED, messages: [] };
    },
    seedSuccesses: () => Promise.reject(new Error('seedSuccesses is not expected in these runs')),
    moveInvalidJudgeRows: () => Promise.reject(new Error('moveInvalidJudgeRows is not expected in these runs')),
    planAtif: () => Promise.reject(new Error('planAtif is not expected in these runs')),
    atifPreflight: () => Promise.reject(new Error('atifPreflight is not expected in these runs')),
    discardPlan: () => Promise.reject(new Error('discardPlan is not expected in these runs')),
    planSelected: () => Promise.reject(new Error('planSelected is not expected in these runs')),
    noiseAgreement: () => Promise.reject(new Error('noiseAgreement is not expected in these runs')),
    settleSavedRows: () => Promise.reject(new Error('settleSavedRows is not expected in these runs')),
    countPairedUnits: async () => {
      if (!o.paired) throw new Error('countPairedUnits is not expected in these runs');
      return o.paired.planned;
    },
    planRound: async (req) => {
      const call = rec.planRounds.length;
      rec.planRounds.push({ req, at: Date.now() });
      const rows = o.nextRoundRows?.(call, req) ?? 0;
      const plan: PlanSummary = {
        ...(firstPlan as PlanSummary),
        planPath: `${req.workDir}/plan-r${req.round + 1}-s${req.segment}.bin`,
        attemptsPath: `${req.workDir}/plan-r${req.round + 1}-s${req.segment}.attempts.bin`,
        rows,
        rowsPerAgent: { agent_a: rows },
      };
      rec.roundPlans.push(plan);
      return plan;
    },
    verifyBatch: async (req) => {
      rec.runningSlots += req.parallelism;
      rec.peakSlots = Math.max(rec.peakSlots, rec.runningSlots);
      rec.runningBatches++;
      rec.peakBatches = Math.max(rec.peakBatches, rec.runningBatches);
      const call: VerifyCall = { req, slotsAtStart: rec.runningSlots, startedAt: Date.now() };
      rec.verify.push(call);
      try {
        await o.beforeVerify?.(req);
        const rows = req.to - req.from;
        // One request per row, within the allowance: a batch that spends it first is held (its rows so far kept).
        const id = `${req.round}:${req.batch}`;
        const before = rec.rowsDone.get(id) ?? 0;
        const sent = Math.min(rows - before, req.allowance ?? rows);
        rec.rowsDone.set(id, before + sent);
        rec.requests += sent;
        const held = before + sent < rows;
        const judgeFailed = held ? 0 : (o.judgeFailed?.(req) ?? 0);
        const result: BatchResult = {
          batch: req.batch,
          mainPart: `${req.workDir}/r${req.round}-b${req.batch}.main.part`,
          sidecarPart: `${req.workDir}/r${req.round}-b${req.batch}.sidecar.part`,
          main: rows - judgeFailed,
          failed: judgeFailed,
          dropped: 0,
          rejected: 0,
          judgeFailed,
          perAgent: { agent_a: { done: rows - judgeFailed, failed: judgeFailed, dropped: 0, rewardSum: rows - judgeFailed } },
          throttled: 0,
          latencyMsSum: 0,
          latencyCount: 0,
          requestsUsed: sent,
          ...(req.paired && o.paired ? { paired: encodePaired(o.paired.units(req), req.round) } : {}),
          ...(judgeFailed > 0 && o.selectedAgoMs ? { selectedAgoMs: o.selectedAgoMs(req) } : {}),
        };
        return held ? { ...result, main: 0, failed: 0, judgeFailed: 0, perAgent: {}, held: true } : result;
      } finally {
        call.endedAt = Date.now();
        rec.runningSlots -= req.parallelism;
        rec.runningBatches--;
      }
    },
    // A loan holds its lanes while the batches it lends to run (the pool's: until none has a row left).
    lendLanes: async (req) => {
      rec.runningSlots += req.lanes;
      rec.peakSlots = Math.max(rec.peakSlots, rec.runningSlots);
      rec.loans.push({ lanes: req.lanes, round: req.round, launched: rec.verify.length, running: rec.runningBatches });
      try {
        // Until its batches have run, or it is cancelled (a heartbeat hears it).
        const ctx = Context.current();
        while (rec.runningBatches > 0 && !ctx.cancellationSignal.aborted) {
          ctx.heartbeat();
          await sleep(5);
        }
      } finally {
        rec.runningSlots -= req.lanes;
      }
    },
    commitBatches: async (req) => {
      // New lengths: the recorded ones plus something that differs from commit to commit.
      const n = rec.commits.length + 1;
      await o.beforeCommit?.(req, n);
      const returned = {
        mainLength: req.mainLength + 1000 * req.mainParts.length + n,
        sidecarLength: req.sidecarLength + 10 * req.sidecarParts.length + n,
      };
      rec.commits.push({ req, returned, at: Date.now() });
      return returned;
    },
    aggregateRun: async (req) => {
      rec.ending.push('aggregateRun');
      rec.aggregates.push(req);
      if (o.aggregate) return o.aggregate(req, rec.aggregates.length);
      return { metricsPath: req.metrics, keyMetrics: [] };
    },
    recordUnstartedRows: async (req) => {
      rec.unstarted.push(req);
      rec.ending.push('recordUnstarted');
      return { rows: 0, path: '' };
    },
    removeWorkDir: async (workDir) => {
      rec.removed.push(workDir);
    },
    uploadOpen: async () => {
      rec.ending.push('uploadOpen');
      return o.uploadOpen ? o.uploadOpen() : { runId: 'run-1', experimentId: '1', artifactUri: 'mlflow-artifacts:/1/run-1/artifacts' };
    },
    uploadRolloutsTable: async () => {
      rec.ending.push('uploadRolloutsTable');
      return o.rows;
    },
    uploadRunMetrics: async (_req, _run, coverage) => {
      rec.ending.push(`uploadRunMetrics ${coverage.scored}/${coverage.missing}`);
      return 3;
    },
    uploadWandbRun: async (_req, coverage) => {
      rec.ending.push(`uploadWandbRun ${coverage.scored}/${coverage.missing}`);
      return { project: 'p', runId: 'w-1', runDir: '/w', offline: true, rows: null, metrics: 3 };
    },
    // The real arithmetic over empty files: the workflow's context is what the tests look at.
    writeCoverage: async (req) => {
      rec.coverages.push(req);
      return coverageOf(emptyCounts(), {
        ...req.context,
        retry_terminal_timeouts: false,
        output: req.outputs.output,
        failures: req.outputs.sidecar,
      });
    },
  };
  return { activities, rec };
}

let runSeq = 0;

/** A RunSpec as the CLI resolves it; no path is ever opened (the activities are stubs). */
function specFor(name: string, overrides: Partial<RunSpec>): RunSpec {
  const dir = `/stubbed/workflow-logic/${name}-${process.pid}-${++runSeq}`;
  return {
    inputsPath: `${dir}/inputs.jsonl`,
    rolloutsPath: `${dir}/rollouts.jsonl`,
    outputPath: `${dir}/out.jsonl`,
    routing: { agents: { agent_a: 'rs' }, catchAll: null, servers: { rs: 'http://127.0.0.1:9' }, taskSources: [] },
    guardServers: [{ name: 'rs', url: 'http://127.0.0.1:9' }],
    concurrency: 8,
    limit: null,
    force: false,
    overwrite: false,
    disableAggregation: false,
    batchSize: 5,
    requestTimeoutMs: 600_000,
    heartbeatTimeoutMs: 10_000,
    resume: false,
    judgeFailedOnly: false,
    append: false,
    repairTruncated: false,
    maxAttempts: 1,
    rejudge: true,
    rejudgeDelayMs: 200,
    ...overrides,
  };
}

type Handle = WorkflowHandleWithFirstExecutionRunId<typeof reverifyRun>;

/** Starts the run on a task queue of its own, with a worker running the real workflow code and the stubs, until `body` ends. */
async function withRun<T>(spec: RunSpec, activities: ReverifyActivities, body: (handle: Handle) => Promise<T>): Promise<T> {
  const taskQueue = `${temporal.taskQueue}-${runSeq}-${Date.now()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: temporal.namespace,
    taskQueue,
    workflowBundle: { codePath: bundlePath },
    activities,
    // As the product's worker (src/temporal/worker.ts): a cancelled loan hears it within 2 s.
    maxHeartbeatThrottleInterval: CHECKPOINT_THROTTLE_MS,
  });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof reverifyRun>('reverifyRun', {
      workflowId: `workflow-logic-${taskQueue}`,
      taskQueue,
      args: [spec],
    });
    return body(handle);
  });
}

/** The result and the final progress of a run left to finish. */
async function finished(handle: Handle): Promise<{ result: RunResult; progress: Progress }> {
  const result = await handle.result();
  return { result, progress: await handle.query(progressQuery) };
}

async function until(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** A promise and what resolves it. */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The plan ranges of `rows` rows in batches of `batchSize`. */
function ranges(rows: number, batchSize: number): Array<[number, number]> {
  return Array.from({ length: Math.ceil(rows / batchSize) }, (_, b) => [b * batchSize, Math.min(rows, (b + 1) * batchSize)]);
}

/** A batch's duration in ms, varied (10–100) but deterministic, so that batches finish out of order. */
const durationOf = (batch: number) => 10 + ((batch * 37) % 10) * 10;

/** Verify calls of one round, by batch. */
const batchesOf = (calls: VerifyCall[], round: number) =>
  calls
    .filter((c) => c.req.round === round)
    .map((c) => c.req)
    .sort((a, b) => a.batch - b.batch);

/** Batch numbers of the main parts of every commit, in commit order (`r<round>-b<batch>.main.part`). */
function committedBatches(commits: Array<{ req: CommitRequest }>): Array<Array<[number, number]>> {
  return commits.map((c) =>
    c.req.mainParts.map((p) => {
      const m = /\/r(\d+)-b(\d+)\.main\.part$/.exec(p);
      if (!m) throw new Error(`unexpected part ${p}`);
      return [Number(m[1]), Number(m[2])] as [number, number];
    }),
  );
}

/** Every committed batch number, sorted (a batch committed twice shows twice). */
const allCommitted = (commits: Array<{ req: CommitRequest }>) =>
  committedBatches(commits)
    .flat()
    .map(([, b]) => b)
    .sort((a, b) => a - b);

/** Each commit received the lengths the previous one returned (the first: those openOutputs reported), and its parts as obsolete. */
function expectLengthsThreaded(commits: Array<{ req: CommitRequest; returned: Lengths }>): void {
  let recorded: Lengths = OPENED;
  let obsolete: string[] = [];
  for (const c of commits) {
    expect({ mainLength: c.req.mainLength, sidecarLength: c.req.sidecarLength }).toEqual(recorded);
    expect(c.req.obsolete).toEqual(obsolete);
    recorded = c.returned;
    obsolete = [...c.req.mainParts, ...c.req.sidecarParts];
  }
}

describe('workflow logic with stub activities', () => {
  it('keeps the /verify slots of the batches in flight within --concurrency, and launches every batch [from,to) once', async () => {
    const rows = 52;
    const spec = specFor('window', { concurrency: 7, batchSize: 4 });
    const { activities, rec } = stubActivities({ rows, beforeVerify: (req) => sleep(durationOf(req.batch)) });
    const { result, progress } = await withRun(spec, activities, finished);

    // Every batch once, covering 0..N with the batch size (13 batches of 4 rows).
    expect(rec.verify).toHaveLength(13);
    expect(batchesOf(rec.verify, 0).map((r) => [r.from, r.to])).toEqual(ranges(rows, 4));
    expect(batchesOf(rec.verify, 0).map((r) => r.batch)).toEqual([...Array(13).keys()]);
    // The ceiling: never more slots running than the concurrency, at any batch's start.
    for (const c of rec.verify) {
      expect(c.req.parallelism).toBeGreaterThanOrEqual(1);
      expect(c.req.parallelism).toBeLessThanOrEqual(c.req.to - c.req.from);
      expect(c.slotsAtStart).toBeLessThanOrEqual(spec.concurrency);
    }
    expect(rec.peakSlots).toBeLessThanOrEqual(spec.concurrency);
    // ...and the window is used: 7 slots over 4 batches are 3 shares of 2, and the slot left over
    // goes to a fourth batch (at least half a share fits): all 7 in use.
    expect(rec.peakBatches).toBeGreaterThanOrEqual(4);
    const share = (batch: number) => rec.verify.find((c) => c.req.batch === batch)!.req.parallelism;
    expect([0, 1, 2, 3].map(share)).toEqual([2, 2, 2, 1]);
    expect(rec.peakSlots).toBe(spec.concurrency);

    expect(result).toMatchObject({ planned: rows, done: rows, failed: 0, rounds: 1, aggregationError: null });
    expect(progress).toMatchObject({
      phase: 'done',
      planned: rows,
      done: rows,
      inFlightRows: 0,
      generation: 0,
      concurrency: 7,
      paused: false,
    });
    expect([rec.guard, rec.checkOutputs, rec.planRun, rec.openOutputs]).toEqual([1, 1, 1, 1]);
    expect(rec.removed).toEqual([result.outputs.workDir]);
  });

  it("cuts the first plan's last window of batches in quarters when the run re-judges, four times as many in flight, every row once", async () => {
    // Concurrency 32 over batches of 128: 4 batches of 8 slots; the last 512 rows go in batches of
    // 32 rows, 16 of them in flight with 2 slots each (their failures come back sooner).
    const rows = 1000;
    const spec = specFor('tail', { concurrency: 32, batchSize: 128, maxAttempts: 2 });
    // The tail batches run long enough (1 s) that 16 of them are in flight together even on a busy
    // machine (at 10-100 ms a loaded CI run once saw only 7 at a time).
    const { activities, rec } = stubActivities({
      rows,
      beforeVerify: (req) => sleep(req.batch >= 3 ? 1000 : durationOf(req.batch)),
    });
    const { result } = await withRun(spec, activities, finished);

    const head = ranges(384, 128);
    const tail = ranges(rows - 384, 32).map(([from, to]) => [from + 384, to + 384]);
    expect(batchesOf(rec.verify, 0).map((r) => [r.from, r.to])).toEqual([...head, ...tail]);
    expect(allCommitted(rec.commits)).toEqual([...Array(head.length + tail.length).keys()]);
    // 2 slots each while 16 or more batches are left to finish (then the shares grow again).
    const total = head.length + tail.length;
    const tailCalls = rec.verify.filter((c) => c.req.batch >= head.length && c.req.batch < total - 16);
    expect(tailCalls.length).toBeGreaterThan(0);
    for (const c of tailCalls) expect(c.req.parallelism).toBe(2);
    expect(rec.peakSlots).toBeLessThanOrEqual(spec.concurrency);
    expect(rec.peakBatches).toBeGreaterThan(8);
    expect(result).toMatchObject({ planned: rows, done: rows, failed: 0 });
  });

  it('launches each batch with the very share it checked against the ceiling, also as the round ends and shares grow', async () => {
    // Concurrency 8 over 6 batches of 10 rows: 2 slots each while 4 or more batches are unfinished,
    // 3 with 3 left. Batches 0 and 1 end first; batch 5 then starts next to batches 2-4 (2 slots
    // each): checked with 4 unfinished (2 slots), it must be launched with 2, not with the share of
    // 3 unfinished (3 slots, 9 in all), which the cursor moved before launching would give.
    const spec = specFor('share', { concurrency: 8, batchSize: 10 });
    // Batches 2-4 run long enough that batch 5 starts before they end even on a loaded machine
    // (at 400 ms a CI run on 2 busy cores once started it after batch 2 had ended).
    const durations: Record<number, number> = { 0: 10, 1: 60, 2: 1500, 3: 1700, 4: 1700, 5: 10 };
    const { activities, rec } = stubActivities({ rows: 60, beforeVerify: (req) => sleep(durations[req.batch]) });
    const { result } = await withRun(spec, activities, finished);

    const call = (batch: number) => rec.verify.find((c) => c.req.batch === batch)!;
    expect(call(5).startedAt).toBeLessThan(call(2).endedAt!);
    expect(call(5).req.parallelism).toBe(2);
    for (const c of rec.verify) expect(c.slotsAtStart).toBeLessThanOrEqual(spec.concurrency);
    expect(rec.peakSlots).toBe(8);
    expect(result.done).toBe(60);
  });

  it("lends an ended batch's share to the batches still running once none is left to launch, within the ceiling", async () => {
    // Concurrency 8 over 5 batches of 10 rows: batches 0-3 hold 2 slots each; batch 4 starts with
    // batch 0's share and runs long; as batches 1-3 end, nothing is left to launch: their shares
    // are lent (2 lanes each) while batch 4 runs, and the run ends once it and the loans have.
    const spec = specFor('loans', { concurrency: 8, batchSize: 10 });
    const durations: Record<number, number> = { 0: 10, 1: 150, 2: 200, 3: 250, 4: 1500 };
    const { activities, rec } = stubActivities({ rows: 50, beforeVerify: (req) => sleep(durations[req.batch]) });
    const { result } = await withRun(spec, activities, finished);

    expect(rec.loans.map((l) => l.lanes)).toEqual([2, 2, 2]);
    for (const l of rec.loans) expect(l).toMatchObject({ round: 0, launched: 5 });
    for (const l of rec.loans) expect(l.running).toBeGreaterThan(0);
    expect(rec.peakSlots).toBe(8);
    expect(allCommitted(rec.commits)).toEqual([0, 1, 2, 3, 4]);
    expect(result.done).toBe(50);
  });

  it('commits every batch exactly once, each commit in batch order, threading the lengths the previous commit returned', async () => {
    const rows = 40;
    const spec = specFor('commit', { concurrency: 8, batchSize: 5 });
    // Batches 0-3 start together; 3 finishes first and its commit is slow (500 ms), while 2 then 1
    // finish; batch 0 is the slowest of all.
    const durations: Record<number, number> = { 0: 1200, 1: 300, 2: 120, 3: 30 };
    const { activities, rec } = stubActivities({
      rows,
      beforeVerify: (req) => sleep(durations[req.batch] ?? 10),
      beforeCommit: (_req, n) => sleep(n === 1 ? 500 : 0),
    });
    const { result } = await withRun(spec, activities, finished);

    const commits = committedBatches(rec.commits).map((c) => c.map(([, b]) => b));
    expect(allCommitted(rec.commits)).toEqual([...Array(8).keys()]);
    expect(committedBatches(rec.commits).every((c) => c.every(([round]) => round === 0))).toBe(true);
    // Within a commit, the parts are in batch order, whatever order the batches finished in.
    for (const c of commits) expect(c).toEqual([...c].sort((a, b) => a - b));
    const ended = new Map(rec.verify.map((c) => [c.req.batch, c.endedAt!]));
    expect(ended.get(2)!).toBeLessThan(ended.get(1)!);
    const withOne = commits.find((c) => c.includes(1))!;
    expect(withOne).toContain(2);
    expect(withOne.indexOf(1)).toBeLessThan(withOne.indexOf(2));
    // Parts come as pairs: the sidecar parts are those of the same batches, in the same order.
    for (const c of rec.commits) expect(c.req.sidecarParts).toEqual(c.req.mainParts.map((p) => p.replace('.main.part', '.sidecar.part')));
    // A slow first batch does not hold back the commits of those that finished ("as batches finish").
    expect(commits[0]).not.toContain(0);
    expect(commits.at(-1)).toContain(0);
    // Each commit starts from the lengths the previous commit returned, and deletes its parts.
    expectLengthsThreaded(rec.commits);
    // Every commit follows the end of the batches it commits.
    commits.forEach((c, i) => c.forEach((b) => expect(rec.commits[i].at).toBeGreaterThanOrEqual(ended.get(b)!)));
    expect(result.done).toBe(rows);
  });

  it("refills a finished batch's slots at once, even while a commit is under way, within the ceiling", async () => {
    const rows = 30;
    const spec = specFor('refill', { concurrency: 8, batchSize: 5 });
    // Batches 0-3 start together; 3 finishes first (4 takes its slots) and its commit takes a
    // second, during which 2 finishes: 5 takes its slots.
    const durations: Record<number, number> = { 0: 2500, 1: 2500, 2: 200, 3: 30 };
    const { activities, rec } = stubActivities({
      rows,
      beforeVerify: (req) => sleep(durations[req.batch] ?? 1500),
      beforeCommit: (_req, n) => sleep(n === 1 ? 1000 : 0),
    });
    const { result } = await withRun(spec, activities, finished);

    const firstCommitEnded = rec.commits[0].at;
    const ended2 = rec.verify.find((c) => c.req.batch === 2)!.endedAt!;
    expect(ended2).toBeLessThan(firstCommitEnded - 500);
    // The batch launched into batch 2's slots started long before that commit ended (runs recorded
    // before this change waited for it).
    const after2 = rec.verify.filter((c) => c.startedAt >= ended2).sort((a, b) => a.startedAt - b.startedAt);
    expect(after2.length).toBeGreaterThan(0);
    expect(after2[0].startedAt).toBeLessThan(firstCommitEnded - 500);
    expect(rec.peakSlots).toBeLessThanOrEqual(8);
    expect(allCommitted(rec.commits)).toEqual([...Array(6).keys()]);
    expect(result.done).toBe(rows);
  });

  it('continues as new every few batches (continueAsNewAfterBatches), still committing every batch once, and counts all rows', async () => {
    const rows = 53;
    const spec = specFor('continue-as-new', { concurrency: 8, batchSize: 5, continueAsNewAfterBatches: 3 });
    const { activities, rec } = stubActivities({ rows, beforeVerify: (req) => sleep(durationOf(req.batch)) });
    const { handle, result, progress } = await withRun(spec, activities, async (handle) => ({ handle, ...(await finished(handle)) }));

    // 11 batches, at most 3 per run: 4 runs in the chain.
    expect(progress.generation).toBe(3);
    const last = await handle.describe();
    expect(last.runId).not.toBe(handle.firstExecutionRunId);
    const firstHistory = await env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
    expect(firstHistory.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();

    // The first phases ran once, in the first run only.
    expect([rec.guard, rec.checkOutputs, rec.planRun, rec.openOutputs]).toEqual([1, 1, 1, 1]);
    expect(batchesOf(rec.verify, 0).map((r) => [r.from, r.to])).toEqual(ranges(rows, 5));
    expect(allCommitted(rec.commits)).toEqual([...Array(11).keys()]);
    // The committed lengths cross each continue-as-new unbroken.
    expectLengthsThreaded(rec.commits);
    expect(result).toMatchObject({ planned: rows, done: rows, failed: 0, rounds: 1 });
    expect(result.perAgent.agent_a).toMatchObject({ done: rows, failed: 0 });
    expect(rec.removed).toEqual([result.outputs.workDir]);
    // A continue-as-new is not an end: the coverage file is written when the outputs open and when the run ends, only.
    expect(rec.coverages.map((c) => [c.context.state, c.context.outcomes_recorded])).toEqual([
      ['open', 0],
      ['finished', rows],
    ]);
  });

  it('lends the free slots while a generation drains for continue-as-new, and ends the loans before the next generation starts', async () => {
    const rows = 45;
    const spec = specFor('continue-as-new-drain', { concurrency: 8, batchSize: 5, continueAsNewAfterBatches: 3 });
    // The last batch of each generation is slow: the generation drains while it answers.
    const slow = (batch: number) => batch % 3 === 2;
    const { activities, rec } = stubActivities({ rows, beforeVerify: (req) => sleep(slow(req.batch) ? 1500 : 20) });
    // A loan as the real one behaves: it holds its lanes until the workflow cancels it.
    const loans: Array<{ lanes: number; startedAt: number; endedAt?: number }> = [];
    activities.lendLanes = async (req) => {
      const loan: (typeof loans)[number] = { lanes: req.lanes, startedAt: Date.now() };
      loans.push(loan);
      rec.runningSlots += req.lanes;
      rec.peakSlots = Math.max(rec.peakSlots, rec.runningSlots);
      try {
        const ctx = Context.current();
        while (!ctx.cancellationSignal.aborted) {
          ctx.heartbeat();
          await sleep(5);
        }
      } finally {
        rec.runningSlots -= req.lanes;
        loan.endedAt = Date.now();
      }
    };
    const { result, progress } = await withRun(spec, activities, finished);

    expect(progress.generation).toBe(2);
    const call = (batch: number) => rec.verify.find((c) => c.req.batch === batch)!;
    for (const last of [2, 5]) {
      // While the slow batch drained its generation, the others' slots were lent to it...
      const during = loans.filter((l) => l.startedAt >= call(last).startedAt && l.startedAt < call(last).endedAt!);
      expect(during.length).toBeGreaterThan(0);
      // ...and every loan had ended (its lanes retired) before the next generation launched a batch.
      for (const l of during) expect(l.endedAt!).toBeLessThanOrEqual(call(last + 1).startedAt);
    }
    expect(rec.peakSlots).toBeLessThanOrEqual(spec.concurrency);
    expect(allCommitted(rec.commits)).toEqual([...Array(9).keys()]);
    expect(result).toMatchObject({ planned: rows, done: rows, failed: 0 });
  });

  it('re-judges as failures commit, while older batches still answer: each after its delay (doubling), each once, up to maxAttempts', async () => {
    const rows = 20;
    const delay = 300;
    const spec = specFor('rejudge-cap', { batchSize: 5, maxAttempts: 3, rejudgeDelayMs: delay });
    // Every batch of every round has one judge failure; each re-judgment plan has 6 rows. The
    // first plan's last batch answers 4 s after the others: its failures come late (the others'
    // shares are lent to it meanwhile; a loan hears its cancel within 2 s).
    const { activities, rec } = stubActivities({
      rows,
      judgeFailed: () => 1,
      nextRoundRows: () => 6,
      beforeVerify: (req) => sleep(req.round === 0 && req.batch === 3 ? 4000 : 20),
    });
    const { handle, result } = await withRun(spec, activities, async (handle) => ({ handle, ...(await finished(handle)) }));

    const roundOf = (batch: number) => rec.verify.find((c) => c.req.batch === batch)!.req.round;
    const planOf = (batch: number) => rec.verify.find((c) => c.req.batch === batch)!.req.plan.planPath;
    const endOf = (batch: number) => rec.verify.find((c) => c.req.batch === batch)!.endedAt!;
    const committedAt = (batch: number) => rec.commits.find((c) => c.req.mainParts.some((p) => p.endsWith(`-b${batch}.main.part`)))!.at;
    // Every batch of rounds 1 and 2 had its failure planned exactly once, by a plan made after its
    // commit; none of round 3 (the cap).
    for (const round of [0, 1]) {
      const planned = rec.planRounds.filter((p) => p.req.round === round).flatMap((p) => p.req.batches);
      const batches = rec.verify.filter((c) => c.req.round === round).map((c) => c.req.batch);
      expect([...planned].sort((a, b) => a - b)).toEqual([...new Set(batches)].sort((a, b) => a - b));
    }
    expect(rec.planRounds.some((p) => p.req.round === 2)).toBe(false);
    // The ceiling holds while two rounds' batches and the loans overlap (a cancelled loan's lanes count until it ends).
    expect(rec.peakSlots).toBeLessThanOrEqual(spec.concurrency);
    for (const p of rec.planRounds) for (const b of p.req.batches) expect(committedAt(b)).toBeLessThanOrEqual(p.at);
    // Streamed: round 2's first plan came while the first plan's slow batch was still answering,
    // and its batches ran then; its late failure was planned afterwards, as a segment of its own.
    const slowEnd = endOf(3);
    expect(rec.planRounds[0].req).toMatchObject({ round: 0, batches: expect.not.arrayContaining([3]) as unknown });
    expect(rec.verify.some((c) => c.req.round === 1 && c.startedAt < slowEnd)).toBe(true);
    expect(rec.planRounds.some((p) => p.req.round === 0 && p.req.batches.includes(3) && p.at >= slowEnd)).toBe(true);
    // Each segment's batches start at least its delay (doubling by round) after the failures it
    // plans; each verifies the plan planRound returned, under its round.
    rec.planRounds.forEach((p, i) => {
      const seg = rec.verify.filter((c) => c.req.plan.planPath === rec.roundPlans[i].planPath && c.req.round === p.req.round + 1);
      const failedAt = Math.max(...p.req.batches.map(endOf));
      for (const c of seg) expect(c.startedAt - failedAt).toBeGreaterThanOrEqual(delay * 2 ** p.req.round);
      for (const b of p.req.batches) expect(roundOf(b)).toBe(p.req.round);
      // ...and is planned from its batches' plan, with that plan's attempts file; no sidecar is named.
      for (const b of p.req.batches) expect(planOf(b)).toBe(p.req.plan.planPath);
      expect(p.req.plan.attemptsPath).toBe(p.req.plan.planPath.replace(/\.bin$/, '.attempts.bin'));
      expect(Object.keys(p.req).sort()).toEqual(['batches', 'maxAttempts', 'plan', 'round', 'segment', 'workDir']);
    });
    // ...on durable timers of the history, each for what is left of a delay: a plan's (its rows'
    // failures) or a segment's planned ahead of its time.
    const events = (await handle.fetchHistory()).events ?? [];
    const timers = events.flatMap((e) => (e.timerStartedEventAttributes ? [tsToMs(e.timerStartedEventAttributes.startToFireTimeout)] : []));
    expect(timers.length).toBeGreaterThan(0);
    for (const t of timers) expect(t).toBeLessThanOrEqual(delay * 2);

    const failed = rec.verify.length;
    expect(result).toMatchObject({ rounds: 3, planned: rows + 6 * rec.planRounds.length, failed, judgeFailed: failed });
    expect(result.done).toBe(result.planned - failed);
    // Said once per round: its later segments join it.
    expect(result.messages.filter((m) => m.startsWith('Re-judging:')).map((m) => /round (\d) \(of at most 3\)/.exec(m)?.[1])).toEqual([
      '2',
      '3',
    ]);
    expectLengthsThreaded(rec.commits);
  });

  it("launches a due re-judgment segment ahead of the first plan's batches not launched yet, not before its delay", async () => {
    const delay = 100;
    const spec = specFor('rejudge-ahead', { concurrency: 8, batchSize: 5, maxAttempts: 2, rejudgeDelayMs: delay });
    // 24 batches, four at a time (2 slots each), 400 ms each; batch 0 has a judge failure. (The
    // dev server fires a timer up to a few hundred ms late: the first plan lasts 2.4 s.)
    const { activities, rec } = stubActivities({
      rows: 120,
      judgeFailed: (req) => (req.round === 0 && req.batch === 0 ? 1 : 0),
      nextRoundRows: () => 1,
      beforeVerify: () => sleep(400),
    });
    const { result, streamed } = await withRun(spec, activities, async (handle) => {
      // While round 2's batch runs, the first pass is still sent: the progress names both rounds.
      let p = await handle.query(progressQuery);
      await until('round 2 to start', async () => (p = await handle.query(progressQuery)).round > 0);
      return { streamed: p, ...(await finished(handle)) };
    });
    expect(streamed).toMatchObject({ round: 1, oldestRound: 0 });
    expect(result.rounds).toBe(2);
    const rejudged = rec.verify.filter((c) => c.req.round === 1);
    expect(rejudged).toHaveLength(1);
    const started = (batch: number) => rec.verify.find((c) => c.req.round === 0 && c.req.batch === batch)!.startedAt;
    const failedAt = rec.verify.find((c) => c.req.round === 0 && c.req.batch === 0)!.endedAt!;
    // Ahead of the first plan's last batches, numbered after them, and not before its delay.
    expect(rejudged[0].startedAt).toBeLessThan(started(20));
    expect(rejudged[0].req.batch).toBe(24);
    expect(rejudged[0].startedAt - failedAt).toBeGreaterThanOrEqual(delay);
    // Its share is its one row, not the 2 slots of the first plan's batches.
    expect(rejudged[0].req.parallelism).toBe(1);
    expect(rec.verify.find((c) => c.req.round === 0 && c.req.batch === 0)!.req.parallelism).toBe(2);
    expect(allCommitted(rec.commits)).toEqual([...Array(25).keys()]);
    expect(rec.peakSlots).toBeLessThanOrEqual(spec.concurrency);
    expect(result).toMatchObject({ rounds: 2, planned: 121, failed: 1, done: 120 });
  });

  it('a loan cancelled for a re-judgment segment keeps its share until it has ended: the ceiling holds', async () => {
    const spec = specFor('loan-then-segment', { batchSize: 5, maxAttempts: 2, rejudgeDelayMs: 100 });
    // Batch 0 ends first without a failure (its share is lent), batch 1 with one (a segment of 4
    // batches is planned and the loan cancelled), batch 3 answers late.
    const { activities, rec } = stubActivities({
      rows: 20,
      judgeFailed: (req) => (req.round === 0 && req.batch === 1 ? 1 : 0),
      nextRoundRows: () => 20,
      beforeVerify: (req) => sleep(req.round > 0 ? 300 : [10, 60, 60, 1500][req.batch]),
    });
    const { result } = await withRun(spec, activities, finished);
    expect(rec.loans.length).toBeGreaterThan(0);
    expect(rec.verify.filter((c) => c.req.round === 1)).toHaveLength(4);
    expect(rec.peakSlots).toBeLessThanOrEqual(spec.concurrency);
    expect(result).toMatchObject({ rounds: 2, planned: 40, failed: 1 });
  });

  it('carries re-judgment segments across continue-as-new: each failure planned once, each batch committed once, the timers armed again', async () => {
    const spec = specFor('segments-can', {
      concurrency: 8,
      batchSize: 5,
      maxAttempts: 3,
      rejudgeDelayMs: 200,
      continueAsNewAfterBatches: 2,
    });
    // Every batch has one judge failure; a plan has a row per batch it takes; batch 3 answers late.
    const { activities, rec } = stubActivities({
      rows: 20,
      judgeFailed: () => 1,
      nextRoundRows: (_call, req) => req.batches.length,
      beforeVerify: (req) => sleep(req.round === 0 && req.batch === 3 ? 1000 : durationOf(req.batch)),
    });
    const { result, progress } = await withRun(spec, activities, finished);
    expect(progress.generation).toBeGreaterThan(1);
    // Each batch ran once and was committed once, under a single numbering across the segments.
    const launched = rec.verify.map((c) => c.req.batch);
    expect(new Set(launched).size).toBe(launched.length);
    expect(allCommitted(rec.commits)).toEqual([...launched].sort((a, b) => a - b));
    expectLengthsThreaded(rec.commits);
    // Rounds 1 and 2's failures each planned once; none of round 3's (the cap).
    for (const round of [0, 1]) {
      const planned = rec.planRounds.filter((p) => p.req.round === round).flatMap((p) => p.req.batches);
      const ran = rec.verify.filter((c) => c.req.round === round).map((c) => c.req.batch);
      expect(planned.sort((a, b) => a - b)).toEqual(ran.sort((a, b) => a - b));
    }
    const failed = rec.verify.length;
    expect(result).toMatchObject({ rounds: 3, planned: 20 + rec.planRounds.reduce((n, p) => n + p.req.batches.length, 0), failed });
    // No segment started before its delay after its failures, whichever run of the chain armed its timer.
    rec.planRounds.forEach((p, i) => {
      const failedAt = Math.max(...p.req.batches.map((b) => rec.verify.find((c) => c.req.batch === b)!.endedAt!));
      for (const c of rec.verify.filter((v) => v.req.plan.planPath === rec.roundPlans[i].planPath)) {
        expect(c.startedAt - failedAt).toBeGreaterThanOrEqual(200 * 2 ** p.req.round);
      }
    });
  });

  it("counts the delay from the round's last judge failure, not from the round's end", async () => {
    const spec = specFor('rejudge-from-failure', { batchSize: 5, maxAttempts: 3, rejudgeDelayMs: 1000 });
    // One batch a round. Round 1's judge failure 800 ms before its batch returned: 200 ms of its 1 s
    // are left. Round 2's 5 s before: more than its 2 s delay, so round 3 starts at once (no timer).
    const { activities, rec } = stubActivities({
      rows: 5,
      judgeFailed: () => 1,
      nextRoundRows: () => 1,
      selectedAgoMs: (req) => (req.round === 0 ? 800 : 5000),
    });
    const { handle, result } = await withRun(spec, activities, async (handle) => ({ handle, ...(await finished(handle)) }));
    expect(result.rounds).toBe(3);
    const events = (await handle.fetchHistory()).events ?? [];
    const timers = events.flatMap((e) => (e.timerStartedEventAttributes ? [tsToMs(e.timerStartedEventAttributes.startToFireTimeout)] : []));
    expect(timers).toHaveLength(1);
    expect(timers[0]).toBeLessThanOrEqual(200);
    // Never before the delay after the failure: round 2 starts ≥ 200 ms after round 1's last batch returned.
    const firstBatchOf = (round: number) => Math.min(...rec.verify.filter((c) => c.req.round === round).map((c) => c.startedAt));
    const lastEndOf = (round: number) => Math.max(...rec.verify.filter((c) => c.req.round === round).map((c) => c.endedAt!));
    expect(firstBatchOf(1) - lastEndOf(0)).toBeGreaterThanOrEqual(200);
    expect(result.messages.filter((m) => m.startsWith('Re-judging:'))).toEqual([
      'Re-judging: 1 row(s) judge-failed in round 1 so far; round 2 (of at most 3) starts now, each failure judged again at least 1s after it',
      'Re-judging: 1 row(s) judge-failed in round 2 so far; round 3 (of at most 3) starts now, each failure judged again at least 2s after it',
    ]);
  });

  it("gathers failures while the first pass launches: a round's plan starts once its oldest has waited its delay since its commit", async () => {
    // One batch at a time, each with one judge failure in every round, answered 600 ms (later
    // rounds 950 ms) before the batch returns (as when it waits for its slowest answer), for several
    // seconds: plans come while the first plan still has batches to launch (at its end, the rest
    // are planned at once).
    const delay = 500;
    const spec = specFor('rejudge-gather', { concurrency: 2, batchSize: 50, maxAttempts: 3, rejudgeDelayMs: delay });
    const { activities, rec } = stubActivities({
      rows: 100 * 50,
      judgeFailed: () => 1,
      nextRoundRows: (_call, req) => req.batches.length,
      selectedAgoMs: (req) => (req.round === 0 ? 600 : 950),
      beforeVerify: () => sleep(60),
    });
    const { result } = await withRun(spec, activities, finished);
    const committedAt = (batch: number) => rec.commits.find((c) => c.req.mainParts.some((p) => p.endsWith(`-b${batch}.main.part`)))!.at;
    const lastLaunch = Math.max(...rec.verify.filter((c) => c.req.round === 0).map((c) => c.startedAt));
    const midPass = rec.planRounds.filter((p) => p.at < lastLaunch - 500);
    // Rounds 1 and 2 each plan while the first pass runs. Round 1's (one source: a plan per
    // gathering) never before its oldest batch was committed the delay ago, though those failures
    // were due 100 ms before; round 2's first (its rows come from many segments, a plan each) not
    // before its twice as long delay after its commit (they were due 50 ms after it): round 1's
    // plans do not take them along.
    for (const round of [0, 1]) expect(midPass.filter((p) => p.req.round === round).length).toBeGreaterThan(0);
    const zero = midPass.filter((p) => p.req.round === 0);
    for (const p of zero) expect(p.at - Math.min(...p.req.batches.map(committedAt))).toBeGreaterThanOrEqual(delay);
    const one = midPass.find((p) => p.req.round === 1)!;
    expect(one.at - committedAt(one.req.batches[0])).toBeGreaterThanOrEqual(2 * delay);
    // ...and so a plan takes several batches' failures.
    expect(zero.reduce((n, p) => n + p.req.batches.length, 0)).toBeGreaterThan(zero.length);
    // Every failure of rounds 1 and 2 planned once (round 3's are at the cap).
    for (const round of [0, 1]) {
      const planned = rec.planRounds.filter((p) => p.req.round === round).flatMap((p) => p.req.batches);
      const failed = rec.verify.filter((c) => c.req.round === round).map((c) => c.req.batch);
      expect(planned.sort((x, y) => x - y)).toEqual(failed.sort((x, y) => x - y));
    }
    expect(result.rounds).toBe(3);
  });

  it('announces no round that will not run: every judge failure at the attempt cap ends the run without a timer', async () => {
    const spec = specFor('rejudge-none-left', { batchSize: 5, maxAttempts: 3, rejudgeDelayMs: 60_000 });
    // Round 1 has judge failures, but each key is at the cap already (a --resume): every plan is empty.
    const { activities, rec } = stubActivities({ rows: 10, judgeFailed: () => 1, nextRoundRows: () => 0 });
    const { handle, result } = await withRun(spec, activities, async (handle) => ({ handle, ...(await finished(handle)) }));
    // One plan of both batches, or one per batch when the first committed while the other still answered.
    expect(rec.planRounds.flatMap((p) => p.req.batches).sort()).toEqual([0, 1]);
    expect(result.rounds).toBe(1);
    // Said once, with the rows of its first plan.
    expect(result.messages.filter((m) => m.startsWith('Re-judging:'))).toEqual([
      `Re-judging: ${rec.planRounds[0].req.batches.length} row(s) judge-failed in round 1, each at the attempt cap (3): no round 2`,
    ]);
    expect(result.messages.some((m) => /starts (in|now)/.test(m))).toBe(false);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((e) => e.timerStartedEventAttributes)).toBe(false);
  });

  it('counts rollouts, not attempts: keys scored and still missing after the re-judgment rounds', async () => {
    // 20 keys; round 1: 2 judge failures per batch (8), all re-planned; round 2: one per batch,
    // re-planned; round 3 (the cap): one per batch fails again and stays missing. How many batches
    // rounds 2 and 3 have depends on how the failures were streamed into segments: counted.
    const spec = specFor('rollout-counts', { batchSize: 5, maxAttempts: 3, rejudgeDelayMs: 50 });
    const { activities, rec } = stubActivities({
      rows: 20,
      judgeFailed: (req) => (req.round === 0 ? 2 : 1),
      nextRoundRows: (_call, req) => req.batches.length * (req.round === 0 ? 2 : 1),
    });
    const { result, progress } = await withRun(spec, activities, finished);
    const batches = (round: number) => rec.verify.filter((c) => c.req.round === round).length;
    expect(batches(0)).toBe(4);
    expect(batches(1)).toBeGreaterThanOrEqual(2);
    const [failed, missing] = [8 + batches(1) + batches(2), batches(2)];
    const planned = 20 + 8 + batches(1);
    expect(result).toMatchObject({ rounds: 3, planned, failed, keys: 20, missing, scored: ROWS_OPENED + 20 - missing });
    // Per agent the same: every failed attempt but the last round's superseded by a later round; those are at the cap.
    expect(result.rollouts).toEqual({ agent_a: { planned: 20, scored: 20 - missing, sidecar: failed, notPersisted: 0, missing } });
    expect(result.missingAfterCap).toBe(missing);
    expect(result.sidecarOpenedAt).toBe(OPENED.sidecarLength);
    expect(progress.sidecarOpenedAt).toBe(OPENED.sidecarLength);
  });

  it('ends the rounds when planRound plans no row, and plans none without judge failures or with rejudge off', async () => {
    const spec = specFor('rejudge-empty', { batchSize: 5, maxAttempts: 5, rejudgeDelayMs: 50 });
    const empty = stubActivities({ rows: 12, judgeFailed: (req) => (req.batch === 1 ? 2 : 0), nextRoundRows: () => 0 });
    const { result } = await withRun(spec, empty.activities, finished);
    expect(empty.rec.planRounds.map((p) => p.req.round)).toEqual([0]);
    expect(empty.rec.verify.every((c) => c.req.round === 0)).toBe(true);
    expect(result).toMatchObject({ rounds: 1, planned: 12, done: 10, judgeFailed: 2 });

    const clean = stubActivities({ rows: 12, nextRoundRows: () => 3 });
    expect((await withRun(specFor('rejudge-clean', { batchSize: 5, maxAttempts: 5 }), clean.activities, finished)).result.rounds).toBe(1);
    expect(clean.rec.planRounds).toEqual([]);

    const off = stubActivities({ rows: 12, judgeFailed: () => 1, nextRoundRows: () => 3 });
    const offSpec = specFor('rejudge-off', { batchSize: 5, maxAttempts: 5, rejudge: false });
    expect((await withRun(offSpec, off.activities, finished)).result).toMatchObject({ rounds: 1, judgeFailed: 3 });
    expect(off.rec.planRounds).toEqual([]);
  });

  it('starts no batch while paused (setPaused update); the batches in flight finish and are committed; unpaused, the run completes', async () => {
    const rows = 30;
    // Concurrency 2 over batches of 5: two batches of one slot each in flight.
    const spec = specFor('pause', { concurrency: 2, batchSize: 5 });
    const firstTwo = gate();
    const { activities, rec } = stubActivities({ rows, beforeVerify: (req) => (req.batch < 2 ? firstTwo.promise : sleep(10)) });

    const { result, paused } = await withRun(spec, activities, async (handle) => {
      await until('the first two batches to start', () => rec.verify.length === 2);
      expect(await handle.executeUpdate(setPausedUpdate, { args: [true] })).toBe(true);
      firstTwo.resolve();
      // Both batches are committed (the workflow task that recorded that would also have launched the next ones)...
      await until('the running batches to be committed', async () => (await handle.query(progressQuery)).done === 10);
      await sleep(300);
      // ...and nothing new started: not in the stubs, not in the history.
      const scheduled = ((await handle.fetchHistory()).events ?? []).filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'verifyBatch',
      );
      expect(scheduled).toHaveLength(2);
      expect(rec.verify).toHaveLength(2);
      const paused = await handle.query(progressQuery);
      // The UI's "current details" (the built-in metadata query) show the phase, the pause and the counts.
      const { currentDetails } = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      expect(currentDetails).toContain('**Phase:** verify · **paused**');
      expect(currentDetails).toMatch(/^\*\*Rows:\*\* 10\/\d+ answered · 10 scored/);
      expect(await handle.executeUpdate(setPausedUpdate, { args: [false] })).toBe(false);
      return { paused, ...(await finished(handle)) };
    });

    expect(paused).toMatchObject({ phase: 'verify', paused: true, done: 10, inFlightRows: 0 });
    expect(batchesOf(rec.verify, 0).map((r) => [r.from, r.to])).toEqual(ranges(rows, 5));
    expect(allCommitted(rec.commits)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(result).toMatchObject({ done: rows, planned: rows });
    expect(result.messages).toContain('Paused by an operator: batches in flight finish, no new one starts');
    expect(result.messages).toContain('Resumed by an operator');
  });

  it('pauses when the request budget is spent (no batch asks beyond it, no row fails); setMaxRequests raises it and the held batches go on', async () => {
    const rows = 30;
    // Two batches of one slot each in flight; every row costs one request in the stubs.
    const spec = specFor('budget', { concurrency: 2, batchSize: 5, maxRequests: 12 });
    const { activities, rec } = stubActivities({ rows, beforeVerify: () => sleep(10) });

    const { result, paused, requestsPaused } = await withRun(spec, activities, async (handle) => {
      await until('the run to pause on its budget', async () => (await handle.query(progressQuery)).budgetPaused === true);
      const paused = await handle.query(progressQuery);
      const launchesPaused = rec.verify.length;
      const requestsPaused = rec.requests;
      await sleep(300);
      expect(rec.verify).toHaveLength(launchesPaused); // nothing starts while the budget is spent
      const { currentDetails } = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      expect(currentDetails).toContain('**paused: request budget spent**');
      expect(currentDetails).toContain('**/verify requests:** 12/12');
      expect(await handle.executeUpdate(setMaxRequestsUpdate, { args: [100] })).toBe(100);
      return { paused, requestsPaused, ...(await finished(handle)) };
    });

    // Exactly the budget was asked for, and the rows answered so far are counted only once their batch is complete.
    expect(paused).toMatchObject({ phase: 'verify', paused: true, budgetPaused: true, requests: { used: 12, max: 12 }, inFlightRows: 0 });
    expect(paused.done).toBe(10);
    expect(paused.failed).toBe(0);
    const pauseLine = paused.messages.find((m) => m.startsWith('Paused: the request budget is spent'));
    expect(pauseLine).toBe(
      'Paused: the request budget is spent (12 of --max-requests 12 /verify requests made); unsent rows wait. ' +
        `Raise it with: reverify control -o ${spec.outputPath} --max-requests ${12 + 20}`,
    );
    // The stubs were asked for exactly the budget (every launch had an allowance); no slot over the ceiling.
    expect(requestsPaused).toBe(12);
    expect(rec.verify.every((c) => typeof c.req.allowance === 'number' && c.req.allowance >= 1)).toBe(true);
    expect(rec.peakSlots).toBeLessThanOrEqual(2);
    // With a budget, an ended batch's share is never lent (held batches take it).
    expect(rec.loans).toEqual([]);
    // Raised: the held batches went on from where they stopped; each batch committed once, every row sent once.
    expect(rec.requests).toBe(rows);
    expect(allCommitted(rec.commits)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(result).toMatchObject({ done: rows, planned: rows, failed: 0 });
    expect(result.messages).toContain('Request budget set to 100 by an operator (12 /verify requests made so far)');
    expect(result.messages.filter((m) => m.startsWith('Paused: the request budget'))).toHaveLength(1);
  });

  it("a batch's terminal InputChanged fails the run with its message and type, after committing the batches that had finished", async () => {
    const message = "'/stubbed/rollouts.jsonl' changed after this run planned it: line 16 is not the row that was planned";
    // Four batches of one slot each, all in flight; the last one fails once the other three are committed.
    const spec = specFor('input-changed', { concurrency: 4, batchSize: 5 });
    const committed = () => committedBatches(rec.commits).flat().length;
    const { activities, rec } = stubActivities({
      rows: 20,
      beforeVerify: async (req) => {
        if (req.batch !== 3) return sleep(10);
        await until('batches 0-2 to be committed', () => committed() === 3);
        throw ApplicationFailure.nonRetryable(message, 'InputChanged');
      },
    });

    const error = await withRun(spec, activities, async (handle) => {
      const err = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      // The failed run still answers the progress query.
      expect((await handle.query(progressQuery)).done).toBe(15);
      return err;
    });

    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ message, type: 'InputChanged', nonRetryable: true });
    // Batch 3 was not retried; batches 0-2 were committed once each, batch 3 never.
    expect(rec.verify.filter((c) => c.req.batch === 3)).toHaveLength(1);
    expect(allCommitted(rec.commits)).toEqual([0, 1, 2]);
    expectLengthsThreaded(rec.commits);
    // No aggregation, and the work directory is kept (the same command with --resume plans again).
    expect(rec.aggregates).toEqual([]);
    expect(rec.removed).toEqual([]);
    // The coverage file: when the outputs opened, and once more as the run failed (counts of the committed batches).
    expect(rec.coverages.map((c) => [c.context.state, c.context.outcomes_recorded])).toEqual([
      ['open', 0],
      ['failed', 15],
    ]);
  });

  it('writes the coverage file when the outputs open and at the end, with the expected keys and the cap saved with the run', async () => {
    const spec = specFor('coverage', { batchSize: 5, maxAttempts: 3, attemptCap: { max_rollout_attempts: 2, attempt_extension: 1 } });
    const { activities, rec } = stubActivities({ rows: 12 });
    const { result } = await withRun(spec, activities, finished);
    expect(rec.coverages.map((c) => c.context.state)).toEqual(['open', 'finished']);
    expect(rec.coverages[1].context).toMatchObject({
      expected: 12,
      not_persisted: 0,
      outcomes_recorded: 12,
      cap: { max_rollout_attempts: 2, attempt_extension: 1 },
    });
    expect(rec.coverages[1].outputs.output).toBe(spec.outputPath);
    // The end's coverage is the result's, and the work directory is removed after it is written.
    expect(result.coverage).toMatchObject({ state: 'finished', attempt_cap: 3 });
    expect(rec.removed).toHaveLength(1);
  });

  it('a batch that finishes while the last commit before a failure runs is committed too', async () => {
    // Commit 1 (batch 0) takes 500 ms; meanwhile batch 1 finishes and batch 2 fails.
    const spec = specFor('commit-before-failing', { concurrency: 3, batchSize: 5 });
    const { activities, rec } = stubActivities({
      rows: 15,
      beforeCommit: (_req, n) => sleep(n === 1 ? 500 : 0),
      beforeVerify: async (req) => {
        if (req.batch === 1) await sleep(150);
        if (req.batch === 2) {
          await sleep(250);
          throw ApplicationFailure.nonRetryable('batch 2 fails', 'InputChanged');
        }
      },
    });
    const error = await withRun(spec, activities, (handle) =>
      handle.result().then(
        () => null,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(allCommitted(rec.commits)).toEqual([0, 1]);
    expectLengthsThreaded(rec.commits);
  });

  it('a failing batch stops the batches still in flight (cancelled, waited for) before the run fails: nothing runs after it', async () => {
    // Batch 0 runs until it is cancelled (heartbeating); batch 1 fails at once.
    const spec = specFor('failure-stops-batches', { concurrency: 2, batchSize: 5, heartbeatTimeoutMs: 1_000 });
    let cancelledAt: number | null = null;
    const { activities, rec } = stubActivities({
      rows: 10,
      beforeVerify: async (req) => {
        if (req.batch === 1) {
          await until('batch 0 to start', () => rec.verify.some((c) => c.req.batch === 0));
          throw ApplicationFailure.nonRetryable('batch 1 fails', 'InputChanged');
        }
        const ctx = Context.current();
        for (;;) {
          ctx.heartbeat();
          if (ctx.cancellationSignal.aborted) {
            await sleep(300); // stopping takes a moment (closing files): the run must wait for it
            cancelledAt = Date.now();
            throw new Error('cancelled');
          }
          await sleep(50);
        }
      },
    });

    const { error, failedAt } = await withRun(spec, activities, async (handle) => {
      const err = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      return { error: err, failedAt: Date.now() };
    });
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).cause).toMatchObject({ message: 'batch 1 fails', type: 'InputChanged' });
    expect(cancelledAt).not.toBeNull();
    const batch0 = rec.verify.find((c) => c.req.batch === 0)!;
    expect(batch0.endedAt).toBeDefined();
    expect(batch0.endedAt!).toBeLessThanOrEqual(failedAt);
    expect(rec.commits).toEqual([]);
  });

  it('a cancel during a commit: the batches that finish meanwhile are committed before the run ends cancelled', async () => {
    // Concurrency 2: batches 0 and 1 run; batch 0 ends and its commit waits on a gate. The run is
    // cancelled during that commit; batch 1 ends (its slot is offered to a batch that is never
    // sent), then the commit ends and batch 2, cancelled, hands back what it finished.
    const spec = specFor('cancel-during-commit', { concurrency: 2, batchSize: 5 });
    const gates = { batch1: gate(), batch2: gate(), commit: gate() };
    let committing = false;
    const { activities, rec } = stubActivities({
      rows: 30,
      beforeVerify: (req) => (req.batch === 1 ? gates.batch1.promise : req.batch === 2 ? gates.batch2.promise : sleep(10)),
      beforeCommit: (_req, n) => {
        if (n > 1) return Promise.resolve();
        committing = true;
        return gates.commit.promise;
      },
    });
    const error = await withRun(spec, activities, async (handle) => {
      await until('the first commit to start', () => committing);
      await handle.cancel();
      await sleep(300);
      gates.batch1.resolve();
      await until('batch 1 to end', () => rec.verify.some((c) => c.req.batch === 1 && c.endedAt !== undefined));
      await sleep(300);
      gates.commit.resolve();
      gates.batch2.resolve();
      const ended = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      // And the history replays (the commit under way not cancelled, no launch once cancelled).
      await Worker.runReplayHistory({ workflowBundle: { codePath: bundlePath } }, await handle.fetchHistory(), handle.workflowId);
      return ended;
    });
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(rec.verify.map((c) => c.req.batch).sort()).toEqual([0, 1, 2]);
    // Every batch that ran is committed once; then the outputs are cut back to the last commit.
    expect(allCommitted(rec.commits)).toEqual([0, 1, 2]);
    const cut = rec.commits.at(-1)!;
    expect(cut.req.mainParts).toEqual([]);
    expectLengthsThreaded(rec.commits.slice(0, -1));
    expect({ mainLength: cut.req.mainLength, sidecarLength: cut.req.sidecarLength }).toEqual(rec.commits.at(-2)!.returned);
  });

  it('an aggregate phase failing with AggregationFailed ends the run normally, with aggregationError set and the work directory removed', async () => {
    const message = 'POST /aggregate_metrics failed: HTTP 422: verify_responses: field required';
    const spec = specFor('aggregation-failed', { batchSize: 5 });
    const { activities, rec } = stubActivities({
      rows: 12,
      aggregate: () => Promise.reject(ApplicationFailure.nonRetryable(message, 'AggregationFailed')),
    });
    const { result, progress } = await withRun(spec, activities, finished);

    expect(result).toMatchObject({ aggregationError: message, metricsPath: null, keyMetrics: [], done: 12, planned: 12 });
    expect(rec.aggregates).toHaveLength(1); // not retried
    expect(rec.aggregates[0]).toMatchObject({ output: result.outputs.output, metrics: result.outputs.metrics });
    // The deadline grows with the rows committed (src/contract/aggregate-timeout.ts).
    expect(rec.aggregates[0]?.timeoutMs).toBeGreaterThanOrEqual(aggregateTimeoutMs(spec.requestTimeoutMs, 12));
    expect(rec.removed).toEqual([result.outputs.workDir]);
    expect(progress.phase).toBe('done');
  });
  it('uploads as NeMo Gym orders it: open and rollouts before aggregation, metrics with coverage after it; nothing without spec.upload', async () => {
    const upload = { configs: ['/stubbed/upload.yaml'], uploadRollouts: true, options: {} };
    const { activities, rec } = stubActivities({ rows: 12 });
    const { result } = await withRun(specFor('upload-order', { batchSize: 5, upload }), activities, finished);
    expect(rec.ending).toEqual(['uploadOpen', 'uploadRolloutsTable', 'aggregateRun', `uploadRunMetrics ${ROWS_OPENED + 12}/0`]);
    expect(result.upload).toEqual({ runId: 'run-1', rows: 12, metrics: 3, warning: null });

    const plain = stubActivities({ rows: 12 });
    const { result: without } = await withRun(specFor('upload-none', { batchSize: 5 }), plain.activities, finished);
    expect(plain.rec.ending).toEqual(['aggregateRun']);
    expect(without.upload).toBeUndefined();

    // W&B: once, after MLflow's metrics; with W&B alone, no MLflow step.
    const both = stubActivities({ rows: 12 });
    const { result: logged } = await withRun(
      specFor('upload-wandb', { batchSize: 5, upload: { ...upload, wandb: true } }),
      both.activities,
      finished,
    );
    expect(both.rec.ending.slice(-2)).toEqual([`uploadRunMetrics ${ROWS_OPENED + 12}/0`, `uploadWandbRun ${ROWS_OPENED + 12}/0`]);
    expect(logged.wandb).toEqual({ uploaded: expect.objectContaining({ runId: 'w-1' }), warning: null });
    const alone = stubActivities({ rows: 12 });
    const wandbOnly = { ...upload, mlflow: false, wandb: true };
    const { result: onlyW } = await withRun(specFor('upload-wandb-only', { batchSize: 5, upload: wandbOnly }), alone.activities, finished);
    expect(alone.rec.ending).toEqual(['aggregateRun', `uploadWandbRun ${ROWS_OPENED + 12}/0`]);
    expect(onlyW.upload).toBeUndefined();
  });

  it('an upload that keeps failing is tried a bounded number of times, then the run ends as it would have, with one warning', async () => {
    const upload = { configs: ['/stubbed/upload.yaml'], uploadRollouts: true, options: {} };
    let tries = 0;
    const { activities, rec } = stubActivities({
      rows: 6,
      uploadOpen: () => {
        tries++;
        return Promise.reject(new Error('cannot reach the MLflow tracking server http://127.0.0.1:9: connect ECONNREFUSED'));
      },
    });
    const { result, progress } = await withRun(specFor('upload-fails', { batchSize: 5, upload }), activities, finished);
    expect(tries).toBe(3);
    expect(rec.ending).toEqual(['uploadOpen', 'uploadOpen', 'uploadOpen', 'aggregateRun']);
    expect(result.upload?.warning).toBe(
      'MLflow upload failed (opening the run): cannot reach the MLflow tracking server http://127.0.0.1:9: connect ECONNREFUSED',
    );
    expect(result).toMatchObject({ aggregationError: null, done: 6 });
    expect(progress.phase).toBe('done');
  });

  it('--stop-when rows>=N: once committed rows reach N no batch starts, those in flight finish and commit, the rest are recorded as unstarted', async () => {
    const spec = specFor('stop-rows', { concurrency: 8, batchSize: 5, stopWhen: [{ kind: 'rows-at-least', rows: 10 }] });
    // Batches after the first two wait until the rule has fired: what is in flight then is known.
    const stopped = gate();
    const { activities, rec } = stubActivities({ rows: 40, beforeVerify: (req) => (req.batch < 2 ? sleep(5) : stopped.promise) });
    const { result, progress, atStop } = await withRun(spec, activities, async (handle) => {
      await until('the rule to fire', async () => (await handle.query(progressQuery)).messages.some((m) => m.startsWith('Stopping early')));
      const atStop = await handle.query(progressQuery);
      stopped.resolve();
      return { ...(await finished(handle)), atStop };
    });
    // The progress query says it while the batches in flight finish (the progress line and `status` show it).
    expect(atStop.stoppedEarly).toEqual(result.stoppedEarly);
    expect(atStop.running!.length).toBeGreaterThan(0);
    expect(progressLine(atStop, 0)).toContain(`stopped early: rows>=10 — finishing ${atStop.running!.length} batch`);
    expect(progress.stoppedEarly).toEqual(result.stoppedEarly);
    const launched = rec.verify.map((c) => c.req.batch).sort((a, b) => a - b);
    // Batches 0 and 1 (10 rows) fire the rule; at most the window (4) was in flight, none started after.
    expect(launched.length).toBeLessThan(8);
    expect(launched).toEqual([...new Set(launched)]);
    expect(allCommitted(rec.commits)).toEqual(launched);
    expectLengthsThreaded(rec.commits);
    let rows = 0;
    const firedAt = committedBatches(rec.commits)
      .map((c) => (rows += 5 * c.length))
      .find((n) => n >= 10);
    expect(result.stoppedEarly).toEqual({ rule: 'rows>=10', rows: firedAt, planned: 40 });
    expect(result.done).toBe(5 * launched.length);
    expect(rec.unstarted.map((u) => u.reason)).toEqual([`stopped early: rows>=10 at ${firedAt} of 40 rows`]);
    expect(rec.unstarted[0].plan).toMatchObject({ rows: 40 });
    expect(rec.coverages.at(-1)!.context).toMatchObject({ state: 'finished', stopped_early: result.stoppedEarly });
    expect(rec.coverages[0].context.stopped_early).toBeUndefined();
    expect(progress.messages).toContain(
      `Stopping early: --stop-when rows>=10 holds at ${firedAt} of 40 rows; no new batch starts, the batches in flight finish and are committed`,
    );

    // A rule that holds only once every batch has started stops nothing: the run ends as any other.
    const late = stubActivities({ rows: 40 });
    const full = await withRun({ ...spec, stopWhen: [{ kind: 'rows-at-least', rows: 40 }] }, late.activities, finished);
    expect(allCommitted(late.rec.commits)).toEqual(ranges(40, 5).map((_, b) => b));
    expect(full.result.stoppedEarly).toBeUndefined();
    expect(late.rec.unstarted).toEqual([]);
  });

  it('--stop-when with the request budget spent: a held batch is not launched again, the run ends (no pause), its rows recorded as unstarted', async () => {
    // Budget 12: batches 0 and 1 get 6 requests each; when batch 0 ends, batch 2 starts with the 1 left and is held.
    const spec = specFor('stop-budget', { concurrency: 2, batchSize: 5, maxRequests: 12, stopWhen: [{ kind: 'rows-at-least', rows: 5 }] });
    const second = gate();
    const { activities, rec } = stubActivities({
      rows: 30,
      beforeVerify: async (req) => {
        if (req.batch === 2) second.resolve();
        if (req.batch === 1) await second.promise;
      },
    });
    const { result } = await withRun(spec, activities, async (handle) => {
      let ended = false;
      // A query that races the run's end may fail: it is asked again (or the run has ended).
      const paused = () =>
        handle.query(progressQuery).then(
          (p) => p.budgetPaused === true,
          () => false,
        );
      const pausedInstead = until('the run to end or pause', async () => ended || (await paused()), 60_000);
      const out = await Promise.race([finished(handle).finally(() => (ended = true)), pausedInstead.then(() => null)]);
      await pausedInstead;
      if (out === null) throw new Error('the run paused on its spent budget instead of ending');
      return out;
    });
    expect(result.stoppedEarly).toMatchObject({ rule: 'rows>=5', planned: 30 });
    expect(rec.verify.filter((c) => c.req.batch === 2).length).toBeGreaterThan(0);
    expect(rec.verify.every((c) => c.req.batch <= 2)).toBe(true);
    expect(allCommitted(rec.commits)).toEqual([0, 1]);
    expect(rec.requests).toBeLessThanOrEqual(12);
    expect(result.messages).toContain(
      'Stopped early with the request budget spent: 1 held batch(es) not launched again; their rows are recorded as never started',
    );
    expect(result.messages.some((m) => m.startsWith('Paused: the request budget'))).toBe(false);
    expect(rec.unstarted.map((u) => u.reason)).toEqual([`stopped early: rows>=5 at ${result.stoppedEarly!.rows} of 30 rows`]);
  });

  it('--stop-when delta-excludes-zero fires at the first commit whose estimate (fed in plan order) excludes 0; none fires without the rule', async () => {
    const rows = 80;
    // A planted change: every old reward 0, every new one 1 (tasks of 4 rollouts, split across batches of 5).
    const rowsOf = (from: number, to: number): Record<number, PairedRow> =>
      Object.fromEntries(Array.from({ length: to - from }, (_, i) => [i, [0, String(Math.floor((from + i) / 4)), 0, 1] as PairedRow]));
    const unitsOf = (req: VerifyRequest) => pairedUnits(rowsOf(req.from, req.to), ['agent_a']);
    const planned = { agent_a: plannedOf(pairedUnits(rowsOf(0, rows), ['agent_a'])) };
    // What src/stats says, batch after batch: the first batch after which the interval excludes 0.
    const expected = createRunEstimate(planned, rows, 0.9, true); // the spec keeps file order
    const fires = ranges(rows, 5).findIndex(([from, to], b) => {
      feedBatch(expected, b, pairedUnits(rowsOf(from, to), ['agent_a']));
      return runEstimateView(expected).all.delta!.lo > 0;
    });
    expect(fires).toBeGreaterThan(0);
    expect(fires).toBeLessThan(15);
    // One batch at a time (concurrency 1; the next starts as one ends, before its commit).
    const spec = specFor('stop-delta', { concurrency: 1, batchSize: 5, confidence: 0.9, order: 'random', orderSeed: 3 });
    const stub = stubActivities({ rows, paired: { planned, units: unitsOf } });
    const { result } = await withRun({ ...spec, stopWhen: [{ kind: 'delta-excludes-zero' }] }, stub.activities, finished);
    // The rule fires at the commit that holds that batch; the batches in flight then finish and are committed; no other starts.
    const firing = committedBatches(stub.rec.commits).find((c) => c.some(([, b]) => b === fires))!;
    const upTo = Math.max(...firing.map(([, b]) => b));
    expect(result.stoppedEarly).toEqual({ rule: 'delta-excludes-zero', rows: 5 * (upTo + 1), planned: rows });
    const launched = stub.rec.verify.map((c) => c.req.batch);
    expect(launched.length).toBeLessThan(16);
    expect(launched).toEqual(Array.from({ length: launched.length }, (_, b) => b));
    expect(allCommitted(stub.rec.commits)).toEqual(launched);
    // The estimate at the end holds every committed batch, the ones that finished after the stop too.
    const atEnd = createRunEstimate(planned, rows, 0.9);
    for (const b of launched) feedBatch(atEnd, b, pairedUnits(rowsOf(5 * b, 5 * b + 5), ['agent_a']));
    expect(result.estimate).toEqual(runEstimateView(atEnd));
    expect(result.estimate!.all.delta!.lo).toBeGreaterThan(0);
    expect(stub.rec.coverages.at(-1)!.context.plan_order).toEqual({ order: 'random', seed: 3 });

    const plain = stubActivities({ rows, paired: { planned, units: unitsOf } });
    const full = await withRun(spec, plain.activities, finished);
    expect(plain.rec.verify).toHaveLength(16);
    expect(full.result.stoppedEarly).toBeUndefined();
    expect(plain.rec.unstarted).toEqual([]);
  });

  it('keeps the live estimate in plan order whatever order batches commit in, across continue-as-new: the progress query answers what src/stats computes', async () => {
    const rows = 40;
    // Tasks of 3 rollouts in batches of 5: tasks split across batches. Old rewards alternate, some new ones flip.
    const task = (r: number) => String(Math.floor(r / 3));
    const old = (r: number) => r % 2;
    const reward = (r: number) => ((r * 7) % 5 === 0 ? 1 - old(r) : old(r));
    const rowsOf = (from: number, to: number): Record<number, PairedRow> =>
      Object.fromEntries(
        Array.from({ length: to - from }, (_, i) => [i, [0, task(from + i), old(from + i), reward(from + i)] as PairedRow]),
      );
    const units = pairedUnits(rowsOf(0, rows), ['agent_a']);
    const planned = { agent_a: plannedOf(units) };
    const spec = specFor('estimate', { concurrency: 8, batchSize: 5, continueAsNewAfterBatches: 3, confidence: 0.9 });
    const durations: Record<number, number> = { 0: 600, 1: 300, 2: 120, 3: 30 };
    const { activities, rec } = stubActivities({
      rows,
      beforeVerify: (req) => sleep(durations[req.batch] ?? 10),
      paired: { planned, units: (req) => pairedUnits(rowsOf(req.from, req.to), ['agent_a']) },
    });
    const { result, progress } = await withRun(spec, activities, finished);

    // Batches committed out of order (3 before 0), yet the estimate is the one fed in plan order.
    const commits = committedBatches(rec.commits).map((c) => c.map(([, b]) => b));
    expect(commits[0]).not.toContain(0);
    expect(rec.verify.every((c) => c.req.paired === true)).toBe(true);
    const expected = createRunEstimate(planned, rows, 0.9, true); // the spec keeps file order
    ranges(rows, 5).forEach(([from, to], b) => feedBatch(expected, b, pairedUnits(rowsOf(from, to), ['agent_a'])));
    expect(progress.estimate).toEqual(runEstimateView(expected));
    expect(result.estimate).toEqual(runEstimateView(expected));
    // Every task in: the interval is the exact paired mean difference over tasks.
    const exact = units.reduce((n, u) => n + u.newSum - u.oldSum, 0) / rows;
    const delta = result.estimate!.all.delta!;
    expect(delta.lo).toBeCloseTo(exact, 12);
    expect(delta.hi).toBeCloseTo(exact, 12);
    expect(result.estimate!.all.tasks).toEqual({ seen: units.length, pending: 0, planned: units.length });
  });
});
