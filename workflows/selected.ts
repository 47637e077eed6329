/**
 * The rows a committed batch selected for a next round (its judge failures and withdrawn
 * re-judgments), noted for re-judgment (rejudge.ts plans them) unless re-judgment is off or its
 * round is the last the attempt cap allows.
 */
import { rejudgesInRounds, type BatchResult, type RunSpec } from '../src/contract/run-spec.js';
import type { RunState } from './run-state.js';
import { segmentIndex, segmentOf } from './segments.js';

export function selectedForNextRound(spec: RunSpec, st: RunState, b: BatchResult, selectedAt: number): void {
  if (selectsForNextRound(spec, st, b))
    noteUnplanned(st, segmentIndex(st.segments!, b.batch), b.batch, b.judgeFailed + (b.withdrawn ?? 0), selectedAt);
}

/** Whether a batch that returned has rows a next round will plan (the window then lends none of its slots). */
export function selectsForNextRound(spec: RunSpec, st: RunState, b: BatchResult): boolean {
  if (b.judgeFailed + (b.withdrawn ?? 0) === 0 || !rejudgesInRounds(spec)) return false;
  return segmentOf(st.segments!, b.batch).round + 1 < (spec.maxAttempts ?? 1);
}

/** A committed batch of segment `segment` selected `rows` rows for the next round, the last at `selectedAt` (rejudge.ts plans them). */
function noteUnplanned(st: RunState, segment: number, batch: number, rows: number, selectedAt: number): void {
  const list = (st.unplanned ??= []);
  let u = list.find((x) => x.segment === segment);
  if (!u) list.push((u = { segment, batches: [], rows: 0, selectedAt }));
  u.batches.push(batch);
  u.rows += rows;
  u.selectedAt = Math.max(u.selectedAt, selectedAt);
}
