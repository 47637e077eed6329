/**
 * The plans the verify window launches from, as segments of one numbering of batches: the first
 * plan's batches are 0..n-1, and each re-judgment plan made since (workflows/rejudge.ts) takes the
 * next numbers. A segment may start only once due (its re-judge delay after its rows' failures), so
 * a re-judgment segment is sent while the older batches still answer, not after a round has drained.
 * Pure and deterministic (the workflow imports it); carried across continue-as-new in the state.
 */
import type { PlanSummary, RunSpec } from '../src/contract/run-spec.js';

export interface Segment {
  /** The round its rows' attempt makes in this run (0: the first plan). */
  round: number;
  plan: PlanSummary;
  /** The number of its first batch. */
  first: number;
  batches: number;
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
  return { round, plan, first: 0, batches: batchesOf(plan.rows, spec.batchSize), ...(operation ? { operation } : {}), dueAt: 0 };
}

/** Batches of every segment. */
export function totalBatches(segments: readonly Segment[]): number {
  const last = segments.at(-1);
  return last ? last.first + last.batches : 0;
}

/** The index of batch `batch`'s segment. */
export function segmentIndex(segments: readonly Segment[], batch: number): number {
  for (let i = segments.length - 1; i >= 0; i--) if (batch >= segments[i].first) return i;
  throw new Error(`batch ${batch} is in no segment`);
}

/** The segment of batch `batch`. */
export function segmentOf(segments: readonly Segment[], batch: number): Segment {
  return segments[segmentIndex(segments, batch)];
}

/** Plan rows `from`..`to - 1` of batch `batch` in its segment's plan. */
export function rowsOfBatch(seg: Segment, batch: number, batchSize: number): { from: number; to: number } {
  const from = (batch - seg.first) * batchSize;
  return { from, to: Math.min(seg.plan.rows, from + batchSize) };
}

/**
 * Committed batches of one segment with rows selected for the next round: their numbers, how many
 * rows, and when the last of them was selected (workflow time: a batch's return less its
 * `selectedAgoMs`), from which the next round's delay counts.
 */
export interface Unplanned {
  segment: number;
  batches: number[];
  rows: number;
  selectedAt: number;
}
