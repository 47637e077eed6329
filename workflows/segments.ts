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
import { rejudgesInRounds, type PlanSummary, type RunSpec } from '../src/contract/run-spec.js';
import { MAX_SHARE, MAX_WINDOW, windowShape } from './window.js';

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
  /** Its last rows in smaller batches (`tailOf`; absent: none). */
  tail?: Tail;
}

/** Plan rows `from` on are cut into batches of `size` rows, not `batchSize`: `parts` of them in the window for each batch. */
export interface Tail {
  from: number;
  size: number;
  parts: number;
}

/** The parts a batch of the tail is cut into. */
export const TAIL_PARTS = 4;

/**
 * The first plan's tail, when the run re-judges: the rows of its last window of batches, in
 * batches of a quarter of the size, so that the window holds more of them, each with a smaller
 * share: four times as many with a quarter of the share, or, where MAX_WINDOW stops that, twice as
 * many with half (window.ts `windowShape`). None where the window already holds more than half of
 * MAX_WINDOW. A batch hands its judge failures over only when it ends, and the first plan's last
 * batches end with the run's slowest answers: the failures held by the batch of the slowest one
 * are judged again after it, with the window empty, and their own failures 6 s later. Smaller
 * batches there hold fewer of them. None when a part would be smaller than a full share.
 */
export function tailOf(rows: number, spec: Pick<RunSpec, 'batchSize' | 'concurrency' | 'rejudge' | 'maxAttempts'>): Tail | undefined {
  const { window } = windowShape(spec.concurrency, spec.batchSize);
  const size = Math.ceil(spec.batchSize / TAIL_PARTS);
  if (!rejudgesInRounds(spec) || MAX_WINDOW < 2 * window || size < MAX_SHARE) return undefined;
  return { from: Math.max(0, Math.floor((rows - window * spec.batchSize) / spec.batchSize)) * spec.batchSize, size, parts: TAIL_PARTS };
}

/** The tail batch `batch` of `seg` is in (undefined: a batch of the full size). */
function tailOfBatch(seg: Segment, batch: number, batchSize: number): Tail | undefined {
  return seg.tail && batch - seg.first >= seg.tail.from / batchSize ? seg.tail : undefined;
}

/** The parts batch `batch` of `seg` is cut into: its tail's, else 1 (window.ts `windowShape` holds that many times the batches). */
export function partsOf(seg: Segment, batch: number, batchSize: number): number {
  return tailOfBatch(seg, batch, batchSize)?.parts ?? 1;
}

/** Batches of a plan of `rows` rows (its `tail` in smaller ones). */
export function batchesOf(rows: number, batchSize: number, tail?: Tail): number {
  if (!tail || tail.from >= rows) return Math.ceil(rows / batchSize);
  return tail.from / batchSize + Math.ceil((rows - tail.from) / tail.size);
}

/** The first segment: the run's first plan (or what it continues from, for a run of an earlier shape), its tail in smaller batches. */
export function firstSegment(
  plan: PlanSummary,
  spec: Pick<RunSpec, 'batchSize' | 'concurrency' | 'rejudge' | 'maxAttempts'>,
  round: number,
  operation?: string,
): Segment {
  const tail = tailOf(plan.rows, spec);
  return {
    round,
    plan,
    first: 0,
    batches: batchesOf(plan.rows, spec.batchSize, tail),
    launched: 0,
    ...(operation ? { operation } : {}),
    dueAt: 0,
    ...(tail ? { tail } : {}),
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
  const tail = tailOfBatch(seg, batch, batchSize);
  const from = tail ? tail.from + (batch - seg.first - tail.from / batchSize) * tail.size : (batch - seg.first) * batchSize;
  return { from, to: Math.min(seg.plan.rows, from + (tail ? tail.size : batchSize)) };
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
  /** When its batch was committed (its rows noted for the next round). */
  notedAt: number;
}
