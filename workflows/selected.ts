/**
 * The rows a committed batch selected for a next round (its judge failures and withdrawn
 * re-judgments), noted for re-judgment (rejudge.ts plans them) unless re-judgment is off or its
 * round is the last the attempt cap allows.
 */
import { rejudgesInRounds, type BatchResult, type RunSpec } from '../src/contract/run-spec.js';
import type { RunState } from './run-state.js';
import { segmentOf } from './segments.js';

export function selectedForNextRound(spec: RunSpec, st: RunState, b: BatchResult, selectedAt: number): void {
  const rows = b.judgeFailed + (b.withdrawn ?? 0);
  if (rows === 0 || !rejudgesInRounds(spec)) return;
  const seg = segmentOf(st.segments!, b.batch);
  if (seg.round + 1 >= (spec.maxAttempts ?? 1)) return;
  noteUnplanned(st, st.segments!.indexOf(seg), b.batch, rows, selectedAt);
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
