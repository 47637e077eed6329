/**
 * The rows a committed batch selected for a next round (its judge failures and withdrawn
 * re-judgments), noted for re-judgment (rejudge.ts plans them) unless re-judgment is off or its
 * round is the last the attempt cap allows.
 */
import { rejudgeDelayMs, rejudgeGatherMs } from '../src/config/run-defaults.js';
import { rejudgesInRounds, type BatchResult, type RunSpec } from '../src/contract/run-spec.js';
import type { RunState } from './run-state.js';
import { segmentOf, type Unplanned } from './segments.js';

export function selectedForNextRound(spec: RunSpec, st: RunState, b: BatchResult, selectedAt: number): void {
  if (!selectsForNextRound(spec, st, b)) return;
  const source = segmentOf(st.segments!, b.batch).first;
  (st.unplanned ??= []).push({ source, batch: b.batch, rows: b.judgeFailed + (b.withdrawn ?? 0), selectedAt, notedAt: Date.now() });
}

/** Whether a batch that returned has rows a next round will plan. */
function selectsForNextRound(spec: RunSpec, st: RunState, b: BatchResult): boolean {
  if (b.judgeFailed + (b.withdrawn ?? 0) === 0 || !rejudgesInRounds(spec)) return false;
  return segmentOf(st.segments!, b.batch).round + 1 < (spec.maxAttempts ?? 1);
}

/** The round (0-based) whose batch selected the rows of `u`. */
export function roundOf(st: RunState, u: Unplanned): number {
  return segmentOf(st.segments!, u.source).round;
}

/** The re-judge delay of the rows of `u`: their round's. */
function delayOf(spec: RunSpec, st: RunState, u: Unplanned): number {
  return rejudgeDelayMs(spec.rejudgeDelayMs, roundOf(st, u));
}

/** When the rows of `u` may be judged again: the re-judge delay of their round after their last failure. */
export function dueAfter(spec: RunSpec, st: RunState, u: Unplanned): number {
  return u.selectedAt + delayOf(spec, st, u);
}

/**
 * When a plan may start with the rows of `u`: their delay after their failure has passed, and they
 * have waited for company (`rejudgeGatherMs`) since their batch was committed: a batch that ends
 * long after its last failure (its slowest answer) does not make a plan of its own at once.
 */
export function planAfter(spec: RunSpec, st: RunState, u: Unplanned): number {
  return Math.max(dueAfter(spec, st, u), u.notedAt + rejudgeGatherMs(delayOf(spec, st, u)));
}
