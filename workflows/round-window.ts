/**
 * The verify window as a small state machine over the run's segments (segments.ts,
 * window-segments.ts), driven as a loop by verify-round.ts. State: the batches finished and not yet
 * committed (`ready`), the first failure, whether it drains for continue-as-new (`stopping`), the
 * loans out (window-loans.ts). Segments, held batches and budget are the run's (RunState); the
 * batches in flight are in `inflight` (the progress query reads it). Transitions: launch (a held
 * batch first, else the next of a due segment, a re-judgment's first, while a share fits under the
 * ceiling), finish (a batch ended: ready, held or failed; its slots go to the next batch at once),
 * lend (nothing to launch), notePause (the budget), commitReady (noting what it selected for a next
 * round), planNext (re-judgment segments), fail (stop the others, commit what finished), drain, continue as new.
 */
import { allHandlersFinished, CancellationScope, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { continueAsNewDue } from '../src/config/history-limits.js';
import type { BatchResult, RunSpec } from '../src/contract/run-spec.js';
import { long } from './activity-proxies.js';
import { batchOptions, batchRequest, type BatchLaunch } from './batch-request.js';
import { batchAllowance, budgetSpentMessage, requestsLeft } from './budget.js';
import { commitBatches, commitHandedBack } from './commit.js';
import type { ReverifyRunWorkflow } from './definitions.js';
import { showDetails } from './details.js';
import { enteredRound, heldWith, landed, type InFlight, type RunState } from './run-state.js';
import { selectedForNextRound } from './selected.js';
import { heldDropped } from './stop-rules.js';
import { Loans } from './window-loans.js';
import { SegmentQueue } from './window-segments.js';
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
  /** When each batch that returned selected its last row for the next round (workflow time). */
  private readonly selectedAt = new Map<number, number>();
  /** Batches that returned held and have not finished yet: held (relaunchable) only once their launch is out of `inflight`. */
  private readonly holding = new Set<number>();
  /** The batches and segment timers run in a scope of their own, so that a failing run can stop them. */
  private readonly scope = new CancellationScope();
  /** Loans of lanes (window-loans.ts) and the segments' launch order (window-segments.ts). */
  readonly loans: Loans;
  readonly queue: SegmentQueue;

  constructor(
    private readonly spec: RunSpec,
    private readonly st: RunState,
    private readonly inflight: Map<number, InFlight>,
  ) {
    this.loans = new Loans(spec, st, this.scope);
    this.queue = new SegmentQueue(spec, st, this.scope, () => this.loans.end()); // a segment due needs the loans' slots
  }

  /**
   * Batches left to launch: not launched yet, or held (none once a rule fired and the budget is
   * spent for good: `heldDropped`).
   */
  private workLeft(): boolean {
    const idle = this.inflight.size === 0 && this.ready.length === 0;
    return (
      this.queue.unlaunched() ||
      (this.st.held.length > 0 && !heldDropped(this.st, idle && this.st.maxRequests !== null && this.left() === 0))
    );
  }

  /** Work to launch now, slots allowing: a held batch, or the next one of a segment that is due. */
  private dueWork(): boolean {
    return this.st.held.length > 0 || (this.queue.unlaunched() && this.queue.nextDue());
  }

  /**
   * Rows selected for a next round wait to be planned, and their delay has passed or the window
   * has nothing due to launch: re-judgment starts while the first pass still runs (with
   * `--stop-when` or a request budget, only once nothing is in flight, so that those rules see the
   * first pass whole).
   */
  planDue(): boolean {
    const { st } = this;
    if ((st.unplanned?.length ?? 0) === 0 || this.stopping || this.failure !== undefined || this.scope.consideredCancelled) return false;
    if (this.queue.whole()) return !this.dueWork() && this.inflight.size === 0 && this.ready.length === 0;
    return this.queue.plannable() || !this.dueWork();
  }

  /** The window goes on while work is left, in flight, waiting for its commit, or to be planned. */
  busy(): boolean {
    return this.workLeft() || this.inflight.size > 0 || this.ready.length > 0 || (this.st.unplanned?.length ?? 0) > 0;
  }

  /** What the loop waits for: a commit, plan or launch to make, a failure, a drained window, a budget pause that changed. */
  wakes(): boolean {
    return (
      this.ready.length > 0 ||
      this.planDue() ||
      this.canLaunch() ||
      this.failure !== undefined ||
      (this.stopping && this.inflight.size === 0) ||
      !this.busy() ||
      (this.st.maxRequests !== null && this.budgetPauseDue() !== this.st.budgetPaused)
    );
  }

  /** The next launch's share of the free slots (window.ts, window-segments.ts `nextShare`; 0: none fits). */
  private share(): number {
    const left = this.queue.left(this.st.held.length + this.inflight.size);
    const shapeFor = (parts: number) => windowShape(this.st.effective, this.spec.batchSize, left, parts);
    return this.queue.nextShare(this.st.held, shapeFor, this.st.effective - this.usedSlots());
  }

  /** Slots held by batches and loans in flight. */
  private usedSlots(): number {
    return [...this.inflight.values()].reduce((a, b) => a + b.slots, 0) + this.loans.slots();
  }

  /** The budget's requests neither made nor promised to a batch in flight (budget.ts); infinite without one. */
  private left(): number {
    return requestsLeft(
      this.st,
      [...this.inflight.values()].map((f) => f.allowance ?? 0),
    );
  }

  /**
   * Slots held in flight never exceed the ceiling: a batch starts only when a share fits (with
   * nothing in flight its whole share does). Once cancelled, no batch is launched (it would fail unsent).
   */
  private canLaunch(): boolean {
    const { st, spec } = this;
    return (
      !this.scope.consideredCancelled &&
      !this.stopping &&
      !st.paused &&
      this.failure === undefined &&
      this.workLeft() &&
      this.dueWork() &&
      (st.maxRequests === null || this.left() > 0) &&
      this.share() > 0 &&
      (spec.continueAsNewAfterBatches === undefined || this.launched < spec.continueAsNewAfterBatches)
    );
  }

  /** Launches batches while their shares fit under the ceiling, a held batch first (out of budget, or stopped with its worker); lends what is left. */
  launchAll(): void {
    while (this.canLaunch()) {
      const slots = this.share();
      const held = this.st.held.length > 0;
      const batch = held ? this.st.held.shift()! : this.queue.take();
      this.launch(batch, slots, held);
      this.launched++;
    }
    this.lendFree();
  }

  /** Starts a batch on `slots` lanes with, under a budget, an allowance out of what is left. */
  private launch(batch: number, slots: number, held: boolean): void {
    const { st, spec } = this;
    const placed = this.queue.batch(batch);
    const rows = placed.to - placed.from;
    const allowance = st.maxRequests === null ? undefined : batchAllowance(rows, slots, this.left());
    this.inflight.set(batch, { round: placed.round, rows, slots, ...(allowance === undefined ? {} : { allowance }) });
    enteredRound(st, placed.round);
    const b: BatchLaunch = { ...placed, slots, allowance, held };
    const started = this.scope.run(() => long.verifyBatch.executeWithOptions(batchOptions(spec, b), [batchRequest(spec, st, b)]));
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
      if (r.selectedAgoMs !== undefined) this.selectedAt.set(batch, Date.now() - r.selectedAgoMs);
    }
  }

  /** Held batches are launched again first, in batch order, once the budget allows. */
  private hold(batch: number): void {
    this.st.held = [...this.st.held, batch].sort((a, b) => a - b);
  }

  /**
   * A batch ended (returned or failed): its slots go to the next batch at once, even while a
   * commit is under way; when there is no batch left to launch, they are lent to the others.
   */
  private finish(batch: number): void {
    this.inflight.delete(batch);
    // Held now, not when it returned: a launch in between (another batch's end) must not start it
    // again while this launch is still in flight (several batches stop at once on a Ctrl-C).
    if (this.holding.delete(batch)) this.hold(batch);
    this.launchAll();
  }

  /**
   * Nothing is due to launch, or nothing launches because the window drains for continue-as-new:
   * the free slots are lent to the batches still running (window-loans.ts), also while a
   * re-judgment is coming (the loans end when its segment is planned or falls due: a loan's lanes
   * retire within a heartbeat; none is lent when a plan comes next); not with a request budget
   * (held batches relaunch there), nor while paused or failing.
   */
  private lendFree(): void {
    const { st } = this;
    const lanes = st.effective - this.usedSlots();
    if (lanes < 1 || this.inflight.size === 0 || this.failure !== undefined) return;
    if (this.scope.consideredCancelled || st.maxRequests !== null || st.paused) return;
    if (this.stopping || (!this.dueWork() && !this.planDue())) this.loans.lend(lanes);
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
    if (paused) st.messages.push(budgetSpentMessage(st, this.spec.outputPath, this.queue.unsentRows(st.held)));
    showDetails(st, this.inflight);
  }

  /** Commits the batches that finished, in batch order (call it when `ready` is not empty); notes what they selected for a next round. */
  async commitReady(): Promise<void> {
    const batches = this.ready.splice(0, this.ready.length);
    await commitBatches(this.spec, this.st, batches);
    for (const b of batches) {
      selectedForNextRound(this.spec, this.st, b, this.selectedAt.get(b.batch) ?? Date.now());
      this.selectedAt.delete(b.batch);
    }
    this.dropDone();
  }

  /** Plans the rows selected for a next round (`planDue`) as segments (window-segments.ts). */
  async planNext(): Promise<void> {
    // Loans lent before these failures were committed end now, well before a segment falls due.
    if (await this.queue.planNext(this.queue.whole() || !this.dueWork())) this.loans.end();
    this.dropDone();
  }

  /** Drops the segments that are done from the state: every batch launched, none in flight, held or waiting for its commit. */
  private dropDone(): void {
    const waiting = new Set([...this.inflight.keys(), ...this.st.held, ...this.holding, ...this.ready.map((r) => r.batch)]);
    this.queue.dropDone((b) => waiting.has(b));
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
   * Continue-as-new is due (`continueAsNewDue`, or `spec.continueAsNewAfterBatches` is reached) while
   * batches are left to launch: the window stops launching and drains, its free slots lent to the
   * batches still running. True once drained.
   */
  drained(): boolean {
    const suggested = continueAsNewDue(workflowInfo());
    const byCount = this.spec.continueAsNewAfterBatches !== undefined && this.launched >= this.spec.continueAsNewAfterBatches;
    if ((suggested || byCount) && this.workLeft()) this.stopping = true;
    return this.stopping && this.inflight.size === 0 && this.ready.length === 0;
  }

  /**
   * The next generation goes on from the cursor the state carries, once the drain's loans have
   * ended (their lanes retired: the ceiling holds across generations) and every handler has finished.
   */
  async continueAsNew(): Promise<never> {
    await this.loans.ended();
    await condition(allHandlersFinished);
    this.st.generation++;
    return continueAsNew<ReverifyRunWorkflow>(this.spec, this.st);
  }
}
