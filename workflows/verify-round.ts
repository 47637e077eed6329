/**
 * The verify phase of one round: a sliding window of `verifyBatch` activities whose `/verify`
 * slots never exceed the run's ceiling, each finished batch committed exactly once (in batch
 * order within each commit), and continue-as-new between batches when the history grows.
 */
import { allHandlersFinished, CancellationScope, condition, continueAsNew, isCancellation, workflowInfo } from '@temporalio/workflow';
import type { BatchResult, RunSpec } from '../src/contract/run-spec.js';
import { loan, long, quick } from './activity-proxies.js';
import { adaptLimit } from './adaptive-limit.js';
import type { reverifyRun } from './reverify-run.js';
import { addCounts, committed, landed, type InFlight, type RunState } from './run-state.js';
import { windowShape } from './window.js';
import { enterPhase, showDetails } from './details.js';
import { batchAllowance, budgetSpentMessage, requestsLeft } from './budget.js';
import { operationPrefix } from '../src/contract/rejudgment.js';

/** Replies of a run that, if all are 4xx rejections, stop it (the server or config is wrong). */
const REJECT_GUARD_REPLIES = 20;

/** One round: the sliding window of verifyBatch activities, with commits as batches finish. */
export async function verifyRound(spec: RunSpec, st: RunState, inflight: Map<number, InFlight>): Promise<void> {
  const plan = st.plan!;
  const outputs = st.outputs!;
  enterPhase(st, 'verify');
  const batches = Math.ceil(plan.rows / spec.batchSize);
  const ready: BatchResult[] = [];
  const failed: { error?: Error } = {};
  let launchedThisGeneration = 0;
  let stopping = false;
  // The round's batches run in a scope of their own, so that a failing run can stop them.
  const batchScope = new CancellationScope();

  const shape = () => windowShape(st.effective, spec.batchSize, batches - st.nextBatch + st.held.length + inflight.size);
  const rowsOf = (batch: number) => Math.min(plan.rows, (batch + 1) * spec.batchSize) - batch * spec.batchSize;
  // The budget (budget.ts): st.maxRequests is null without one.
  const left = () =>
    requestsLeft(
      st,
      [...inflight.values()].map((f) => f.allowance ?? 0),
    );
  // A re-judgment round (or a --judge-failed-only pass) settles judge failures as operations
  // (src/contract/rejudgment.ts).
  const operation = st.round > 0 || spec.judgeFailedOnly ? operationPrefix(workflowInfo().firstExecutionRunId, st.round) : undefined;
  /** Loans in flight (their slots), by a number of their own. */
  const loans = new Map<number, number>();
  let lent = 0;
  const launch = (batch: number, slots: number, held = false) => {
    const from = batch * spec.batchSize;
    const to = Math.min(plan.rows, from + spec.batchSize);
    const replies = st.totals.main + st.totals.failed + st.totals.dropped;
    const rejectGuard = st.totals.rejected === replies && replies < REJECT_GUARD_REPLIES ? REJECT_GUARD_REPLIES - replies : 0;
    const allowance = st.maxRequests === null ? undefined : batchAllowance(to - from, slots, left());
    inflight.set(batch, { rows: to - from, slots, ...(allowance === undefined ? {} : { allowance }) });
    const started = batchScope.run(() =>
      long.verifyBatch.executeWithOptions(
        {
          summary: `${st.round > 0 ? `re-judge round ${st.round + 1}: ` : ''}verify rows ${from}..${to - 1} (batch ${batch + 1}/${batches}${held ? ', held before' : ''})`,
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
              ...(plan.inputFormat ? { inputFormat: plan.inputFormat } : {}),
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
            ...(allowance === undefined ? {} : { allowance }),
            outputSidecar: outputs.sidecar,
            ...(operation === undefined ? {} : { operation }),
            retry: { retryInvalidJudgeResponses: spec.retryInvalidJudgeResponses, retryTerminalTimeouts: spec.retryTerminalTimeouts },
          },
        ],
      ),
    );
    void started
      .then(
        (r) => {
          st.requestsUsed += r.requestsUsed ?? 0;
          if (r.held) st.held = [...st.held, batch].sort((a, b) => a - b);
          else {
            ready.push(r);
            landed(st, r);
          }
        },
        (err: Error) => (failed.error ??= err),
      )
      .finally(() => {
        const { slots: freed } = inflight.get(batch)!;
        inflight.delete(batch);
        // Its slots go to the next batch at once, even while a commit is under way; at the round's
        // end, its share is lent to the batches still running (lendTail).
        launchAll();
        lendTail(freed);
      });
  };

  /**
   * A batch ended and no batch is left to launch: its share is lent to the batches still running
   * (activities/lend-lanes.ts), so the round's last rows are not sent on their own shares alone
   * while the rest of the ceiling idles. At most one loan per batch that ends; a loan ends once
   * the batches of its worker have no row left to hand out, and those still out when the round's
   * batches have ended are cancelled without waiting (a loan sends nothing of its own). Not with a
   * request budget (held batches relaunch there), nor while paused, stopping or failing.
   */
  function lendTail(freed: number): void {
    const lanes = Math.min(freed, st.effective - usedSlots());
    if (
      lanes < 1 ||
      st.nextBatch < batches ||
      st.held.length > 0 ||
      st.maxRequests !== null ||
      stopping ||
      st.paused ||
      failed.error !== undefined ||
      inflight.size === 0
    )
      return;
    const key = ++lent;
    loans.set(key, lanes);
    void batchScope
      .run(() =>
        loan.lendLanes.executeWithOptions(
          {
            summary: `${st.round > 0 ? `re-judge round ${st.round + 1}: ` : ''}lend ${lanes} /verify lane(s) to the last batches`,
            heartbeatTimeout: spec.heartbeatTimeoutMs,
            allowEagerDispatch: false,
          },
          [{ round: st.round, lanes }],
        ),
      )
      // A loan sends nothing of its own: its failure (a lost worker) costs the run nothing.
      .catch(() => undefined)
      .finally(() => loans.delete(key));
  }

  // Slots held by batches in flight never exceed the concurrency: a batch starts only when its
  // share fits (with nothing in flight it always fits, since a share is at most the concurrency).
  const usedSlots = () => [...inflight.values()].reduce((a, b) => a + b.slots, 0) + [...loans.values()].reduce((a, b) => a + b, 0);
  // Once the run is cancelled, no batch is launched (it would fail at once, unsent); see commit().
  const canLaunch = () =>
    !batchScope.consideredCancelled &&
    !stopping &&
    !st.paused &&
    failed.error === undefined &&
    (st.nextBatch < batches || st.held.length > 0) &&
    (st.maxRequests === null || left() > 0) &&
    usedSlots() + shape().parallelism <= st.effective &&
    (spec.continueAsNewAfterBatches === undefined || launchedThisGeneration < spec.continueAsNewAfterBatches);

  // Paused on the budget when nothing is left for the work that is: said once, until it is raised.
  const budgetPauseDue = () =>
    st.maxRequests !== null && inflight.size === 0 && ready.length === 0 && left() === 0 && (st.nextBatch < batches || st.held.length > 0);
  const noteBudgetPause = () => {
    const paused = budgetPauseDue();
    if (paused === st.budgetPaused) return;
    st.budgetPaused = paused;
    if (paused) {
      const unsent = Math.max(0, plan.rows - st.nextBatch * spec.batchSize) + st.held.reduce((a, b) => a + rowsOf(b), 0);
      st.messages.push(budgetSpentMessage(st, spec.outputPath, unsent));
    }
    showDetails(st, inflight);
  };

  /** Launches batches while their shares fit under the ceiling. */
  function launchAll(): void {
    while (canLaunch()) {
      // The share is computed once per launch: the very value canLaunch() checked against the ceiling.
      const checked = shape().parallelism;
      // A held batch goes first (only with a budget: st.held stays empty without one).
      if (st.held.length > 0) {
        const [batch, ...rest] = st.held;
        st.held = rest;
        launch(batch, checked, true);
        launchedThisGeneration++;
        continue;
      }
      st.nextBatch++;
      launch(st.nextBatch - 1, checked);
      launchedThisGeneration++;
    }
  }

  try {
    await windowLoop();
    // The round's batches have ended: loans still out have nothing left to lend to.
    if (loans.size > 0) batchScope.cancel();
  } catch (err) {
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) await commitHandedBack(spec, st, inflight, ready);
    throw err;
  }

  async function windowLoop(): Promise<void> {
    while (st.nextBatch < batches || st.held.length > 0 || inflight.size > 0 || ready.length > 0) {
      launchAll();
      noteBudgetPause();
      await condition(
        () =>
          ready.length > 0 ||
          canLaunch() ||
          failed.error !== undefined ||
          (stopping && inflight.size === 0) ||
          (st.maxRequests !== null && budgetPauseDue() !== st.budgetPaused),
      );
      // Refill the window before committing, so freed slots do not wait for the commit's round trip.
      launchAll();
      // Whatever finished is committed, even when the run is about to fail: committed rows are kept.
      if (ready.length > 0) await commit(spec, st, ready.splice(0, ready.length));
      showDetails(st, inflight);
      if (failed.error) {
        await stopBatches(batchScope, inflight);
        // Batches that finished during that commit are committed too before the run fails.
        while (ready.length > 0) await commit(spec, st, ready.splice(0, ready.length));
        throw failed.error;
      }
      const suggested = workflowInfo().continueAsNewSuggested;
      const byCount = spec.continueAsNewAfterBatches !== undefined && launchedThisGeneration >= spec.continueAsNewAfterBatches;
      if ((suggested || byCount) && (st.nextBatch < batches || st.held.length > 0)) stopping = true;
      if (stopping && inflight.size === 0 && ready.length === 0) {
        await condition(allHandlersFinished);
        st.generation++;
        await continueAsNew<typeof reverifyRun>(spec, st);
      }
    }
  }
}

/**
 * The run is being cancelled (`reverify cancel`): the batches in flight were asked to stop; they
 * hand back the rows they finished (their requests in flight may answer first), which are committed
 * before the run ends, so no paid-for verdict is lost.
 */
async function commitHandedBack(spec: RunSpec, st: RunState, inflight: Map<number, InFlight>, ready: BatchResult[]): Promise<void> {
  await CancellationScope.nonCancellable(async () => {
    await condition(() => inflight.size === 0);
    const handedBack = ready.splice(0, ready.length).filter((b) => b.main + b.failed + b.dropped > 0);
    if (handedBack.length === 0) return;
    await commit(spec, st, handedBack);
    const rows = handedBack.reduce((n, b) => n + b.main + b.failed + b.dropped, 0);
    const left = handedBack.reduce((n, b) => n + (b.unfinished ?? 0), 0);
    st.messages.push(`Cancelling: committed the ${rows} row(s) the batches in flight finished (${left} left for --resume)`);
  });
}

/**
 * A batch failed the run: the batches still in flight are cancelled and waited for (they stop at
 * their next heartbeat), so that no activity writes to the work directory after the run has ended
 * and the user's next command starts from a quiet directory. Those that finished meanwhile are
 * committed by the caller.
 * A run being cancelled by an operator is left to endCancelled (cancel.ts), which waits the same way.
 */
async function stopBatches(batchScope: CancellationScope, inflight: Map<number, InFlight>): Promise<void> {
  if (CancellationScope.current().consideredCancelled || inflight.size === 0) return;
  batchScope.cancel();
  await condition(() => inflight.size === 0);
}

/** Appends part files to the outputs exactly once and records the new lengths. */
export async function appendParts(
  spec: RunSpec,
  st: RunState,
  mainParts: string[],
  sidecarParts: string[],
  summary: string,
): Promise<void> {
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

/**
 * Commits finished batches and adds their counts. The batches are in no other list once taken
 * out of `ready`: a commit, once begun, is not cancelled (a cancel that arrives meanwhile takes
 * effect at the next wait).
 */
async function commit(spec: RunSpec, st: RunState, batches: BatchResult[]): Promise<void> {
  batches.sort((a, b) => a.batch - b.batch);
  const append = () =>
    appendParts(
      spec,
      st,
      batches.map((b) => b.mainPart),
      batches.map((b) => b.sidecarPart),
      `commit ${st.round > 0 ? `round ${st.round + 1} ` : ''}batches ${batches.map((b) => b.batch + 1).join(',')}`,
    );
  await CancellationScope.nonCancellable(append);
  const withdrawn = batches.reduce((n, b) => n + (b.withdrawn ?? 0), 0);
  if (withdrawn > 0)
    st.messages.push(
      `Re-judgment withdrawn for ${withdrawn} row(s): the verifier answered without a grade (no reward); ` +
        `nothing was written, their failures stay selected and the next pass judges them again`,
    );
  for (const b of batches) {
    addCounts(st.totals, b);
    committed(st, b);
    if (st.mainRows !== null) st.mainRows += b.main;
    // A withdrawn re-judgment (answered without a grade) leaves its failure selected for the next round.
    st.roundJudgeFailed += b.judgeFailed + (b.withdrawn ?? 0);
    // Shown by the progress line (`concurrency 8/32`), not as messages: it may change all day.
    ({ effective: st.effective, baselineLatencyMs: st.baselineLatencyMs } = adaptLimit(st, st.concurrency, b));
  }
}
