/**
 * The window of one verify round as a small state machine. verify-round.ts drives it as a loop.
 *
 * State: the round's batches finished and not yet committed (`ready`), the first failure, whether
 * it drains for continue-as-new (`stopping`), the loans out. The cursor, the held batches and the
 * budget are the run's (RunState: carried across continue-as-new), the batches in flight are in
 * `inflight` (the progress query reads it).
 *
 * Transitions: launch (a held batch first, else the next one, while its share fits under the
 * ceiling), finish (a batch ended: ready, held or failed; its slots go to the next batch at once),
 * lend (the round's tail), notePause (the budget), commitReady, fail (stop the others, commit what
 * finished), drain and continue as new, endLoans.
 */
import { allHandlersFinished, CancellationScope, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { BatchResult, PlanSummary, RunSpec } from '../src/contract/run-spec.js';
import { operationPrefix } from '../src/contract/rejudgment.js';
import { loan, long } from './activity-proxies.js';
import { batchOptions, batchRequest, loanOptions, type BatchLaunch } from './batch-request.js';
import { batchAllowance, budgetSpentMessage, requestsLeft } from './budget.js';
import { commitBatches, commitHandedBack } from './commit.js';
import type { ReverifyRunWorkflow } from './definitions.js';
import { showDetails } from './details.js';
import { heldWith, landed, noteSelected, type InFlight, type RunState } from './run-state.js';
import { heldDropped } from './stop-rules.js';
import { windowShape } from './window.js';

export class RoundWindow {
  /** Batches finished and not yet committed. */
  readonly ready: BatchResult[] = [];
  /** The first failure of a batch: the run fails once the others have stopped. */
  failure: Error | undefined;
  /** Continue-as-new is due: no batch launches, the window drains. */
  private stopping = false;
  /** Batches launched by this generation (`spec.continueAsNewAfterBatches`). */
  private launched = 0;
  /** Loans in flight (their slots), by a number of their own. */
  private readonly loans = new Map<number, number>();
  /** Batches that returned held and have not finished yet: held (relaunchable) only once their launch is out of `inflight`. */
  private readonly holding = new Set<number>();
  private lent = 0;
  /** When the round's last batch ended (workflow time), once none is left to launch or in flight. */
  endedAt: number | undefined;
  /** The round's batches and loans run in a scope of their own, so that a failing run can stop them. */
  private readonly scope = new CancellationScope();
  private readonly plan: PlanSummary;
  /** Batches of the round. */
  private readonly batches: number;
  /** A re-judgment round (or a --judge-failed-only pass) settles judge failures as operations (src/contract/rejudgment.ts). */
  private readonly operation: string | undefined;

  constructor(
    private readonly spec: RunSpec,
    private readonly st: RunState,
    private readonly inflight: Map<number, InFlight>,
  ) {
    this.plan = st.plan!;
    this.batches = Math.ceil(this.plan.rows / spec.batchSize);
    this.operation = st.round > 0 || spec.judgeFailedOnly ? operationPrefix(workflowInfo().firstExecutionRunId, st.round) : undefined;
  }

  /**
   * Batches left to launch: not launched yet (none once a `--stop-when` rule fired: stop-rules.ts),
   * or held (none once a rule fired and the budget is spent for good: `heldDropped`).
   */
  private workLeft(): boolean {
    const idle = this.inflight.size === 0 && this.ready.length === 0;
    return (
      (!this.st.stoppedEarly && this.st.nextBatch < this.batches) ||
      (this.st.held.length > 0 && !heldDropped(this.st, idle && this.st.maxRequests !== null && this.left() === 0))
    );
  }

  /** The round goes on while work is left, in flight, or waiting for its commit. */
  busy(): boolean {
    return this.workLeft() || this.inflight.size > 0 || this.ready.length > 0;
  }

  /** What the loop waits for: a commit or a launch to make, a failure, a drained window, a budget pause that changed. */
  wakes(): boolean {
    return (
      this.ready.length > 0 ||
      this.canLaunch() ||
      this.failure !== undefined ||
      (this.stopping && this.inflight.size === 0) ||
      !this.busy() ||
      (this.st.maxRequests !== null && this.budgetPauseDue() !== this.st.budgetPaused)
    );
  }

  private shape() {
    return windowShape(this.st.effective, this.spec.batchSize, this.batches - this.st.nextBatch + this.st.held.length + this.inflight.size);
  }

  /** Slots held by batches and loans in flight. */
  private usedSlots(): number {
    return [...this.inflight.values()].reduce((a, b) => a + b.slots, 0) + [...this.loans.values()].reduce((a, b) => a + b, 0);
  }

  /** The budget's requests neither made nor promised to a batch in flight (budget.ts); infinite without one. */
  private left(): number {
    return requestsLeft(
      this.st,
      [...this.inflight.values()].map((f) => f.allowance ?? 0),
    );
  }

  /**
   * Slots held in flight never exceed the ceiling: a batch starts only when its share fits (with
   * nothing in flight it always fits, since a share is at most the ceiling). Once the run is
   * cancelled, no batch is launched (it would fail at once, unsent).
   */
  private canLaunch(): boolean {
    const { st, spec } = this;
    return (
      !this.scope.consideredCancelled &&
      !this.stopping &&
      !st.paused &&
      this.failure === undefined &&
      this.workLeft() &&
      (st.maxRequests === null || this.left() > 0) &&
      this.usedSlots() + this.shape().parallelism <= st.effective &&
      (spec.continueAsNewAfterBatches === undefined || this.launched < spec.continueAsNewAfterBatches)
    );
  }

  /** Launches batches while their shares fit under the ceiling; a held batch first (out of budget, or stopped with its worker). */
  launchAll(): void {
    while (this.canLaunch()) {
      // The share is computed once per launch: the very value canLaunch() checked against the ceiling.
      const slots = this.shape().parallelism;
      const held = this.st.held.length > 0;
      const batch = held ? this.st.held.shift()! : this.st.nextBatch++;
      this.launch(batch, slots, held);
      this.launched++;
    }
  }

  /** Starts a batch on `slots` lanes with, under a budget, an allowance out of what is left. */
  private launch(batch: number, slots: number, held: boolean): void {
    const { st, spec } = this;
    const from = batch * spec.batchSize;
    const to = Math.min(this.plan.rows, from + spec.batchSize);
    const allowance = st.maxRequests === null ? undefined : batchAllowance(to - from, slots, this.left());
    this.inflight.set(batch, { rows: to - from, slots, ...(allowance === undefined ? {} : { allowance }) });
    const b: BatchLaunch = { batch, of: this.batches, from, to, slots, allowance, held, operation: this.operation };
    const started = this.scope.run(() => long.verifyBatch.executeWithOptions(batchOptions(spec, st, b), [batchRequest(spec, st, b)]));
    void started
      .then(
        (r) => this.ended(batch, r),
        (err: Error) => (this.failure ??= err),
      )
      .finally(() => this.finish(batch));
  }

  /** A batch returned: ready for its commit, or held when it spent its allowance or its worker stopped before its last row. */
  private ended(batch: number, r: BatchResult): void {
    this.st.requestsUsed += r.requestsUsed ?? 0;
    if (r.held) {
      this.holding.add(batch);
      heldWith(this.st, r);
    } else {
      this.ready.push(r);
      landed(this.st, r);
      noteSelected(this.st, r);
    }
  }

  /** Held batches are launched again first, in batch order, once the budget allows. */
  private hold(batch: number): void {
    this.st.held = [...this.st.held, batch].sort((a, b) => a - b);
  }

  /**
   * A batch ended (returned or failed): its slots go to the next batch at once, even while a
   * commit is under way; when there is no batch left to launch, its share is lent to the others.
   */
  private finish(batch: number): void {
    const { slots: freed } = this.inflight.get(batch)!;
    this.inflight.delete(batch);
    // Held now, not when it returned: a launch in between (another batch's end) must not start it
    // again while this launch is still in flight (several batches stop at once on a Ctrl-C).
    if (this.holding.delete(batch)) this.hold(batch);
    this.launchAll();
    this.lend(freed);
    if (this.inflight.size === 0 && !this.workLeft()) this.endedAt = Date.now();
  }

  /**
   * A batch ended and no batch is left to launch: its share is lent to the batches still running
   * (activities/lend-lanes.ts), so the round's last rows are not sent on their own shares alone
   * while the rest of the ceiling idles. At most one loan per batch that ends; a loan moves on
   * (Temporal retries it) from a worker process whose batches have no row left to hand out to the
   * next, and those still out when the round's batches have ended are cancelled without waiting
   * (endLoans; a loan sends nothing of its own).
   */
  private lend(freed: number): void {
    const lanes = Math.min(freed, this.st.effective - this.usedSlots());
    if (lanes < 1 || !this.mayLend()) return;
    const key = ++this.lent;
    this.loans.set(key, lanes);
    void this.scope
      .run(() => loan.lendLanes.executeWithOptions(loanOptions(this.spec, this.st, lanes), [{ round: this.st.round, lanes }]))
      // A loan sends nothing of its own: its failure (a lost worker) costs the run nothing.
      .catch(() => undefined)
      .finally(() => this.loans.delete(key));
  }

  /** Not with a request budget (held batches relaunch there), nor while paused, stopping or failing. */
  private mayLend(): boolean {
    const st = this.st;
    return (
      !this.workLeft() && st.maxRequests === null && !this.stopping && !st.paused && this.failure === undefined && this.inflight.size > 0
    );
  }

  /** The round's batches have ended: loans still out have nothing left to lend to. */
  endLoans(): void {
    if (this.loans.size > 0) this.scope.cancel();
  }

  /** Paused on the budget when nothing is left for the work that is. */
  private budgetPauseDue(): boolean {
    return this.st.maxRequests !== null && this.inflight.size === 0 && this.ready.length === 0 && this.left() === 0 && this.workLeft();
  }

  /** Notes a budget pause (said once, until the budget is raised) or its end. */
  notePause(): void {
    const st = this.st;
    const paused = this.budgetPauseDue();
    if (paused === st.budgetPaused) return;
    st.budgetPaused = paused;
    if (paused) st.messages.push(budgetSpentMessage(st, this.spec.outputPath, this.unsentRows()));
    showDetails(st, this.inflight);
  }

  /** Rows of the batches not launched yet and of those held. */
  private unsentRows(): number {
    const { st, spec } = this;
    const rowsOf = (batch: number) => Math.min(this.plan.rows, (batch + 1) * spec.batchSize) - batch * spec.batchSize;
    return Math.max(0, this.plan.rows - st.nextBatch * spec.batchSize) + st.held.reduce((a, b) => a + rowsOf(b), 0);
  }

  /** Commits the batches that finished, in batch order (call it when `ready` is not empty). */
  commitReady(): Promise<void> {
    return commitBatches(this.spec, this.st, this.ready.splice(0, this.ready.length));
  }

  /**
   * A batch failed the run: the batches still in flight are cancelled and waited for (they stop
   * at their next heartbeat), so that no activity writes to the work directory after the run has
   * ended; those that finished meanwhile are committed, then the failure is thrown. A run being
   * cancelled by an operator is left to endCancelled (cancel.ts), which waits the same way.
   */
  async fail(): Promise<never> {
    if (!CancellationScope.current().consideredCancelled && this.inflight.size > 0) {
      this.scope.cancel();
      await condition(() => this.inflight.size === 0);
    }
    while (this.ready.length > 0) await this.commitReady();
    throw this.failure!;
  }

  /** Cancelled by an operator: the rows the batches in flight hand back are committed (commit.ts). */
  commitHandedBack(): Promise<void> {
    return commitHandedBack(this.spec, this.st, this.inflight, this.ready);
  }

  /**
   * Continue-as-new is due (Temporal suggests it, or `spec.continueAsNewAfterBatches` is reached)
   * while batches are left to launch: the window stops launching and drains. True once drained.
   */
  drained(): boolean {
    const suggested = workflowInfo().continueAsNewSuggested;
    const byCount = this.spec.continueAsNewAfterBatches !== undefined && this.launched >= this.spec.continueAsNewAfterBatches;
    if ((suggested || byCount) && this.workLeft()) this.stopping = true;
    return this.stopping && this.inflight.size === 0 && this.ready.length === 0;
  }

  /** The next generation goes on from the cursor the state carries, once every handler has finished. */
  async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    this.st.generation++;
    return continueAsNew<ReverifyRunWorkflow>(this.spec, this.st);
  }
}
