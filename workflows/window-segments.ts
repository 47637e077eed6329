/**
 * The verify window's launch order over the run's segments (segments.ts): which batch is next (a
 * due re-judgment segment before the rest of the first plan), whether a segment's re-judge delay
 * has passed (a durable timer per segment planned ahead of it, and one for the oldest rows not
 * planned yet, their summaries in the history saying what they wait for), the rows not launched
 * yet, and new segments planned (rejudge.ts) and armed.
 */
import { CancellationScope, sleep, workflowInfo } from '@temporalio/workflow';
import { operationPrefix } from '../src/contract/rejudgment.js';
import type { RunSpec } from '../src/contract/run-spec.js';
import type { BatchLaunch } from './batch-request.js';
import { enterPhase } from './details.js';
import { dueSummary, planUnplanned, planWaitSummary } from './rejudge.js';
import type { RunState } from './run-state.js';
import { recordStoppedEarly } from './stop-rules.js';
import { dueAfter, planAfter, roundOf } from './selected.js';
import type { WindowShape } from './window.js';
import {
  doneSegments,
  firstSegment,
  nextSegment,
  partsOf,
  rowsOfBatch,
  segmentOf,
  unlaunchedOf,
  type Segment,
  type Unplanned,
} from './segments.js';

export class SegmentQueue {
  /** Segments (by first batch) whose delay has passed in this generation. */
  private readonly due = new Set<number>();
  /** When the plan timer fires, and the round its rows failed in (0-based; null: none armed). */
  private planTimer: { at: number; round: number } | null = null;
  /** When the last plan timer was due: rows due by then are plannable once it fired, whatever the clock says. */
  private firedAt = 0;

  /** The first segment (unless carried), and the timers of the segments carried in the state; `onDue` runs when one fires. */
  constructor(
    private readonly spec: RunSpec,
    private readonly st: RunState,
    private readonly scope: CancellationScope,
    private readonly onDue: () => void,
  ) {
    // A --judge-failed-only pass settles judge failures as operations (src/contract/rejudgment.ts).
    const operation = st.round > 0 || spec.judgeFailedOnly ? operationPrefix(workflowInfo().firstExecutionRunId, st.round) : undefined;
    st.segments ??= [firstSegment(st.plan!, spec, st.round, operation)];
    for (const seg of this.segments) this.arm(seg);
  }

  get segments(): Segment[] {
    return this.st.segments!;
  }

  private arm(seg: Segment): void {
    const left = seg.dueAt - Date.now();
    if (left <= 0) {
      this.due.add(seg.first);
      return;
    }
    this.wait(left, dueSummary(this.spec, seg, left), () => {
      this.due.add(seg.first);
      this.onDue();
    });
  }

  private wait(ms: number, summary: string, then: () => void): void {
    void this.scope
      .run(() => sleep(ms, { summary }))
      .then(then)
      .catch(() => undefined);
  }

  /** A timer for the oldest rows not planned yet, unless one is armed: the loop plans them once it fires (`plannable`). */
  armPlanTimer(): void {
    const { spec, st } = this;
    if (this.planTimer !== null || !st.unplanned?.length) return;
    const oldest = st.unplanned.reduce((a, u) => (planAfter(spec, st, u) < planAfter(spec, st, a) ? u : a));
    const at = planAfter(spec, st, oldest);
    const left = at - Date.now();
    if (left <= 0) return;
    const round = roundOf(st, oldest);
    this.planTimer = { at, round };
    this.wait(left, planWaitSummary(spec, round, left), () => {
      this.planTimer = null;
      this.firedAt = at;
      this.armPlanTimer();
    });
  }

  /** `--stop-when` and request budgets see the first pass whole: its failures are planned only once it has been sent and answered. */
  whole(): boolean {
    return (this.spec.stopWhen?.length ?? 0) > 0 || this.st.maxRequests !== null;
  }

  /** Rows selected for a next round are to be planned now (`plannableRounds`). */
  plannable(): boolean {
    return this.plannableRounds().size > 0;
  }

  /**
   * The rounds (0-based, of the failures) whose selected rows are planned now: the round's oldest
   * may start a plan (selected.ts `planAfter`). The rows of other rounds go on gathering.
   */
  private plannableRounds(): Set<number> {
    const { spec, st } = this;
    const now = this.now();
    const ready = new Set<number>();
    for (const u of st.unplanned ?? []) if (planAfter(spec, st, u) <= now) ready.add(roundOf(st, u));
    return ready;
  }

  private now(): number {
    return Math.max(Date.now(), this.firedAt);
  }

  /**
   * Plans the rows committed batches selected for a next round as segments: those of the rounds
   * `plannableRounds` names whose delay has passed, or with `all` every one (each segment then due
   * its delay after its rows' last failure).
   * A `--stop-when` first pass has ended here: its unstarted rows are recorded first, and its
   * batches never started are skipped. True when a segment was added.
   */
  async planNext(all: boolean): Promise<boolean> {
    const { st } = this;
    if (st.stoppedEarly) {
      await recordStoppedEarly(st);
      this.segments[0].launched = this.segments[0].batches;
    }
    const from = this.segments.length;
    const rounds = this.plannableRounds();
    const now = this.now();
    const chosen = (u: Unplanned) => all || (rounds.has(roundOf(st, u)) && dueAfter(this.spec, st, u) <= now);
    await planUnplanned(this.spec, st, chosen);
    for (const seg of this.segments.slice(from)) this.arm(seg);
    return this.segments.length > from;
  }

  /** Drops the re-judgment segments that are done (segments.ts `doneSegments`), so that the state stays small. */
  dropDone(busy: (batch: number) => boolean): void {
    const { st } = this;
    const unplanned = new Set((st.unplanned ?? []).map((u) => u.source));
    const done = doneSegments(this.segments, (seg) => unplanned.has(seg.first) || anyBatch(seg, busy));
    if (done.size === 0) return;
    st.segments = this.segments.filter((s) => !done.has(s.first));
    for (const first of done) this.due.delete(first);
  }

  /** Waiting for a re-judgment's delay with nothing in flight (`idle`): the phase, and when it starts and which round (the progress query). */
  notePhase(idle: boolean): void {
    const { st } = this;
    const next = idle ? this.waitingFor() : null;
    st.rejudgeAt = next ? next.at : undefined;
    st.rejudgeRound = next ? next.round + 1 : undefined;
    if ((next !== null) !== (st.phase === 'rejudge-wait')) enterPhase(st, next ? 'rejudge-wait' : 'verify');
  }

  /** The segments with batches not launched yet (the first plan's none once a `--stop-when` rule fired: stop-rules.ts). */
  private open(): Segment[] {
    return this.segments.filter((s, i) => unlaunchedOf(s) > 0 && !(i === 0 && this.st.stoppedEarly));
  }

  /** Batches not launched yet. */
  unlaunched(): boolean {
    return this.open().length > 0;
  }

  /** A batch may launch now: its segment is due. */
  nextDue(): boolean {
    return this.nextOpen() !== null;
  }

  private nextOpen(): Segment | null {
    const open = new Set(this.open());
    return nextSegment(this.segments, (s) => open.has(s) && this.due.has(s.first));
  }

  /**
   * The share of the next launch (`held` first) out of `free` slots, given the window's shape for
   * the parts its batch is cut into (`shapeFor`: window.ts `windowShape`; the first plan's tail is
   * in parts, segments.ts `partsOf`): `parallelism`, or its rows when fewer (a small re-judgment
   * batch holds no slot its lanes cannot use: a batch runs one lane a row at most); when fewer slots
   * are free, those, if at least half of it, so that what a small batch left is not idle until
   * another ends (lanes are pooled: a share is lanes, not rows). 0: none fits.
   */
  nextShare(held: readonly number[], shapeFor: (parts: number) => WindowShape, free: number): number {
    const next = this.next(held);
    if (next === null) return fitting(shapeFor(1).parallelism, free);
    const seg = segmentOf(this.segments, next);
    const { from, to } = rowsOfBatch(seg, next, this.spec.batchSize);
    const { parallelism } = shapeFor(partsOf(seg, next, this.spec.batchSize));
    return fitting(Math.max(1, Math.min(parallelism, to - from)), free);
  }

  /** The batch launched next: the first held, else the next of the next due segment (null: none). */
  private next(held: readonly number[]): number | null {
    if (held.length > 0) return held[0];
    const seg = this.nextOpen();
    return seg && seg.first + seg.launched;
  }

  /** Takes the next batch to launch (call only when `nextDue()`). */
  take(): number {
    const seg = this.nextOpen()!;
    this.st.batchesLaunched++;
    return seg.first + seg.launched++;
  }

  /** When the next re-judgment falls due and its round (0-based), while none is (null: one is due, or nothing is left to launch or plan). */
  private waitingFor(): { at: number; round: number } | null {
    if (this.nextDue()) return null;
    const waits = this.open().map((s) => ({ at: s.dueAt, round: s.round }));
    if (this.planTimer !== null) waits.push({ at: this.planTimer.at, round: this.planTimer.round + 1 });
    return waits.reduce<{ at: number; round: number } | null>((a, w) => (a === null || w.at < a.at ? w : a), null);
  }

  /** Batches not finished: not launched yet, and `more` (held, in flight). */
  left(more: number): number {
    return this.open().reduce((n, s) => n + unlaunchedOf(s), more);
  }

  /** Batch `batch` as its segment places it: its round, plan, rows and operation prefix. */
  batch(batch: number): Omit<BatchLaunch, 'slots' | 'allowance' | 'held'> {
    const seg = segmentOf(this.segments, batch);
    const { from, to } = rowsOfBatch(seg, batch, this.spec.batchSize);
    const placed = { batch, index: batch - seg.first, of: seg.batches, round: seg.round, plan: seg.plan, from, to };
    return seg.operation ? { ...placed, operation: seg.operation } : placed;
  }

  /** Rows of the batches not launched yet and of `held`. */
  unsentRows(held: readonly number[]): number {
    const rowsOf = (b: number) => {
      const { from, to } = this.batch(b);
      return to - from;
    };
    let rows = held.reduce((a, b) => a + rowsOf(b), 0);
    for (const seg of this.open()) for (let b = seg.first + seg.launched; b < seg.first + seg.batches; b++) rows += rowsOf(b);
    return rows;
  }
}

/** A launch that wants `want` slots, out of `free`: all of them, else the free ones if at least half (0: none fits). */
function fitting(want: number, free: number): number {
  return free >= want ? want : free >= Math.ceil(want / 2) ? free : 0;
}

/** Whether any batch of `seg` is `busy`. */
function anyBatch(seg: Segment, busy: (batch: number) => boolean): boolean {
  for (let b = seg.first; b < seg.first + seg.batches; b++) if (busy(b)) return true;
  return false;
}
