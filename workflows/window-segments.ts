/**
 * The verify window's launch order over the run's segments (segments.ts): which batch is next,
 * whether its segment's re-judge delay has passed (a durable timer per segment, its summary in the
 * history saying what it waits for), the rows not launched yet, and new segments planned
 * (rejudge.ts) and armed.
 */
import { CancellationScope, sleep } from '@temporalio/workflow';
import type { RunSpec } from '../src/contract/run-spec.js';
import type { BatchLaunch } from './batch-request.js';
import { enterPhase } from './details.js';
import { dueSummary, planUnplanned } from './rejudge.js';
import type { RunState } from './run-state.js';
import { recordStoppedEarly } from './stop-rules.js';
import { rowsOfBatch, segmentIndex, segmentOf, totalBatches, type Segment } from './segments.js';

export class SegmentQueue {
  /** Segments (by index) whose delay has passed in this generation. */
  private readonly due = new Set<number>();

  /** Arms the segments carried in the state; `onDue` runs when a timer fires. */
  constructor(
    private readonly spec: RunSpec,
    private readonly st: RunState,
    private readonly scope: CancellationScope,
    private readonly onDue: () => void,
  ) {
    this.armFrom(0);
  }

  get segments(): Segment[] {
    return this.st.segments!;
  }

  /** Starts the timers of the segments from `index` on; a segment whose time has come is due at once. */
  armFrom(index: number): void {
    for (let i = index; i < this.segments.length; i++) this.arm(i);
  }

  private arm(index: number): void {
    const seg = this.segments[index];
    const left = seg.dueAt - Date.now();
    if (left <= 0) {
      this.due.add(index);
      return;
    }
    void this.scope
      .run(() => sleep(left, { summary: dueSummary(this.spec, seg, left) }))
      .then(() => {
        this.due.add(index);
        this.onDue();
      })
      .catch(() => undefined);
  }

  /**
   * Plans the rows committed batches selected for a next round as segments, each due its delay
   * after its rows' last failure. A `--stop-when` first pass has ended here: its unstarted rows are
   * recorded first, and its batches never started are skipped. True when a segment was added.
   */
  async planNext(): Promise<boolean> {
    const { st } = this;
    if (st.stoppedEarly) {
      await recordStoppedEarly(st);
      st.nextBatch = Math.max(st.nextBatch, this.segments[0].batches);
    }
    const from = this.segments.length;
    await planUnplanned(this.spec, st);
    this.armFrom(from);
    return this.segments.length > from;
  }

  /** Waiting for a segment's delay with nothing in flight (`idle`): the phase, and when it starts (the progress query). */
  notePhase(idle: boolean): void {
    const { st } = this;
    const until = idle ? this.waitingUntil() : null;
    const waiting = until !== null;
    st.rejudgeAt = waiting ? until : undefined;
    if (waiting !== (st.phase === 'rejudge-wait')) enterPhase(st, waiting ? 'rejudge-wait' : 'verify');
  }

  /** Batches not launched yet (the first plan's none once a `--stop-when` rule fired: stop-rules.ts). */
  unlaunched(): boolean {
    const first = this.segments[0];
    return this.st.nextBatch < totalBatches(this.segments) && !(this.st.stoppedEarly && this.st.nextBatch < first.first + first.batches);
  }

  /** The next batch's segment is due. */
  nextDue(): boolean {
    return this.due.has(segmentIndex(this.segments, this.st.nextBatch));
  }

  /** When the next batch's segment falls due, while it is not yet (null: due, or nothing left to launch). */
  waitingUntil(): number | null {
    return this.unlaunched() && !this.nextDue() ? segmentOf(this.segments, this.st.nextBatch).dueAt : null;
  }

  /** Batches not finished: not launched yet, and `more` (held, in flight). */
  left(more: number): number {
    return totalBatches(this.segments) - this.st.nextBatch + more;
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
    for (let b = this.st.nextBatch; b < totalBatches(this.segments); b++) rows += rowsOf(b);
    return rows;
  }
}
