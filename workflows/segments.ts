/**
 * The plans the verify window launches from, as segments of one numbering of batches: the first
 * plan's batches are 0..n-1, and each re-judgment plan made since (workflows/rejudge.ts) takes the
 * next numbers. Each segment launches its batches in order (its own cursor, `launched`), once due
 * (its re-judge delay after its rows' failures); a due re-judgment segment goes before the rest of
 * the first plan, so a failure is judged again soon after its delay, not once the first pass has
 * been sent. Pure and deterministic (the workflow imports it); carried across continue-as-new in
 * the state. A segment is known by its first batch number (stable: a segment that is done is
 * dropped from the state, `doneSegments`).
 */
import type { PlanSummary, RunSpec } from '../src/contract/run-spec.js';

export interface Segment {
  /** The round its rows' attempt makes in this run (0: the first plan). */
  round: number;
  plan: PlanSummary;
  /** The number of its first batch (its name: unique in the run). */
  first: number;
  batches: number;
  /** Its batches launched so far: the next is `first + launched`. */
  launched: number;
  /** Operation id prefix of a re-judgment (src/contract/rejudgment.ts; absent: the first pass). */
  operation?: string;
  /** Workflow time (epoch ms) from which its batches may start (0: at once). */
  dueAt: number;
}

/** Batches of a plan of `rows` rows. */
export function batchesOf(rows: number, batchSize: number): number {
  return Math.ceil(rows / batchSize);
}

/** The first segment: the run's first plan (or what it continues from, for a run of an earlier shape). */
export function firstSegment(plan: PlanSummary, spec: Pick<RunSpec, 'batchSize'>, round: number, operation?: string): Segment {
  return {
    round,
    plan,
    first: 0,
    batches: batchesOf(plan.rows, spec.batchSize),
    launched: 0,
    ...(operation ? { operation } : {}),
    dueAt: 0,
  };
}

/** The number the next segment's first batch takes (the last segment is never dropped). */
export function totalBatches(segments: readonly Segment[]): number {
  const last = segments.at(-1);
  return last ? last.first + last.batches : 0;
}

/** The segment of batch `batch`. */
export function segmentOf(segments: readonly Segment[], batch: number): Segment {
  for (let i = segments.length - 1; i >= 0; i--) {
    const seg = segments[i];
    if (batch >= seg.first) {
      if (batch < seg.first + seg.batches) return seg;
      break;
    }
  }
  throw new Error(`batch ${batch} is in no segment`);
}

/** Batches of `seg` not launched yet. */
export function unlaunchedOf(seg: Segment): number {
  return seg.batches - seg.launched;
}

/**
 * The segment the window launches from next, among those with batches left that `due` allows: a
 * re-judgment segment first (the oldest), then the first plan. Null when none is due.
 */
export function nextSegment(segments: readonly Segment[], due: (seg: Segment) => boolean): Segment | null {
  let first: Segment | null = null;
  for (const seg of segments) {
    if (unlaunchedOf(seg) === 0 || !due(seg)) continue;
    if (seg !== segments[0]) return seg;
    first = seg;
  }
  return first;
}

/** Plan rows `from`..`to - 1` of batch `batch` in its segment's plan. */
export function rowsOfBatch(seg: Segment, batch: number, batchSize: number): { from: number; to: number } {
  const from = (batch - seg.first) * batchSize;
  return { from, to: Math.min(seg.plan.rows, from + batchSize) };
}

/**
 * The re-judgment segments that are done: every batch launched, none of them `busy` (in flight,
 * held, waiting for its commit, or with rows not planned yet). The first plan and the last segment
 * (it numbers the next) are kept.
 */
export function doneSegments(segments: readonly Segment[], busy: (seg: Segment) => boolean): Set<number> {
  const done = new Set<number>();
  for (let i = 1; i < segments.length - 1; i++) {
    const seg = segments[i];
    if (unlaunchedOf(seg) === 0 && !busy(seg)) done.add(seg.first);
  }
  return done;
}

/**
 * A committed batch with rows selected for the next round: the segment it came from (by its first
 * batch), how many rows, and when the last of them was selected (workflow time: the batch's return
 * less its `selectedAgoMs`), from which the next round's delay counts.
 */
export interface Unplanned {
  source: number;
  batch: number;
  rows: number;
  selectedAt: number;
}
