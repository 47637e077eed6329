/** The run's live estimate as the workflow keeps it (src/stats/run-estimate.ts): order, splits, pending, refusals. */
import { describe, expect, it } from 'vitest';
import { pairedUnits, type PairedRow } from '../../activities/verify-batch/paired-units.js';
import type { PairedUnit } from '../../src/contract/batch-result.js';
import { liveIntervals } from '../../src/stats/live-estimate.js';
import { settleRejudged } from '../../src/stats/rejudged-units.js';
import { createRunEstimate, feedBatch, plannedOf, runEstimateView, type PlannedUnits } from '../../src/stats/run-estimate.js';

/** 60 rows, tasks of 4 rollouts, two agents by task parity; `reward(r)` null: a judge failure. */
const ROWS = 60;
const agentOf = (r: number) => Math.floor(r / 4) % 2;
const old = (r: number) => (r % 3 === 0 ? 1 : 0);
const flip = (r: number) => ((r * 11) % 7 === 0 ? 1 - old(r) : old(r));

function batches(size: number, reward: (r: number) => number | null = flip): PairedUnit[][] {
  const out: PairedUnit[][] = [];
  for (let from = 0; from < ROWS; from += size) {
    const rows: Record<number, PairedRow> = {};
    for (let r = from; r < Math.min(ROWS, from + size); r++) rows[r - from] = [agentOf(r), String(Math.floor(r / 4)), old(r), reward(r)];
    out.push(pairedUnits(rows, ['a', 'b']));
  }
  return out;
}

function planned(): Record<string, PlannedUnits> {
  const units = batches(ROWS)[0];
  return { a: plannedOf(units.filter((u) => u.agent === 'a')), b: plannedOf(units.filter((u) => u.agent === 'b')) };
}

/** The exact paired mean difference over the rows of `agent` (or all), every row known. */
function exactDelta(agent?: string): number {
  const units = batches(ROWS)[0].filter((u) => agent === undefined || u.agent === agent);
  return units.reduce((n, u) => n + u.newSum - u.oldSum, 0) / units.reduce((n, u) => n + u.rows, 0);
}

describe('run estimate', () => {
  it('enters batches in plan order: batches committed out of order give the state of the in-order feed', () => {
    const bs = batches(7);
    const inOrder = createRunEstimate(planned(), ROWS, 0.95);
    bs.forEach((units, b) => feedBatch(inOrder, b, units));
    const shuffled = createRunEstimate(planned(), ROWS, 0.95);
    const order = [3, 1, 0, 8, 2, 5, 4, 7, 6];
    order.forEach((b) => feedBatch(shuffled, b, bs[b]));
    expect(shuffled).toEqual(inOrder);
    // Before batch 0 came, nothing entered.
    const early = createRunEstimate(planned(), ROWS, 0.95);
    feedBatch(early, 3, bs[3]);
    expect(runEstimateView(early).all.tasks.seen).toBe(0);
    expect(Object.keys(early.waiting)).toEqual(['3']);
  });

  it('keeps the last task of each batch pending until the next batch shows where it ends; at the end the interval is exact', () => {
    const e = createRunEstimate(planned(), ROWS, 0.95);
    const bs = batches(6); // tasks of 4 split across batches of 6
    feedBatch(e, 0, bs[0]);
    const v = runEstimateView(e);
    expect(v.all.tasks).toEqual({ seen: 2, pending: 1, planned: 15 });
    bs.slice(1).forEach((units, b) => feedBatch(e, b + 1, units));
    const end = runEstimateView(e);
    expect(end.all.tasks).toEqual({ seen: 15, pending: 0, planned: 15 });
    for (const [agent, view] of [
      [undefined, end.all],
      ['a', end.perAgent.a],
      ['b', end.perAgent.b],
    ] as const) {
      expect(view.delta!.lo).toBeCloseTo(exactDelta(agent), 12);
      expect(view.delta!.hi).toBeCloseTo(exactDelta(agent), 12);
    }
  });

  it('a judge failure keeps its task at the worst case: the final interval spans what the row could have been', () => {
    const e = createRunEstimate(planned(), ROWS, 0.95);
    batches(10, (r) => (r === 13 ? null : flip(r))).forEach((units, b) => feedBatch(e, b, units));
    const d = runEstimateView(e).all.delta!;
    // Row 13 unknown: the mean over the 60 rows can move by 1/60 for it.
    const withoutIt = exactDelta() - (flip(13) - old(13)) / 60;
    expect(d.lo).toBeCloseTo(withoutIt + (0 - old(13)) / 60, 12);
    expect(d.hi).toBeCloseTo(withoutIt + (1 - old(13)) / 60, 12);
    expect(runEstimateView(e).all.tasks.pending).toBe(1);
  });

  it('units of different sizes (tasks not kept together) are weighted by their rows: the end is the mean over rows', () => {
    // Rows in an order that cuts tasks into runs of 1 to 3 rows.
    const task = (r: number) => String([0, 0, 1, 2, 2, 2, 0, 1, 1, 3][r % 10] + 4 * Math.floor(r / 10));
    const rows: Record<number, PairedRow> = {};
    for (let r = 0; r < ROWS; r++) rows[r] = [0, task(r), old(r), flip(r)];
    const units = pairedUnits(rows, ['a']);
    const e = createRunEstimate({ a: plannedOf(units) }, ROWS, 0.95);
    for (let b = 0; b * 9 < ROWS; b++) {
      const part = Object.fromEntries(
        Object.entries(rows)
          .filter(([r]) => Math.floor(Number(r) / 9) === b)
          .map(([r, v]) => [Number(r) - 9 * b, v]),
      );
      feedBatch(e, b, pairedUnits(part, ['a']));
    }
    let exact = 0;
    for (let r = 0; r < ROWS; r++) exact += (flip(r) - old(r)) / ROWS;
    const v = runEstimateView(e).all;
    expect(v.delta!.lo).toBeCloseTo(exact, 12);
    expect(v.delta!.hi).toBeCloseTo(exact, 12);
    expect(v.tasks.seen).toBe(units.length);
  });

  it('turns an agent off, without throwing, on a reward outside [0, 1] or more tasks than planned', () => {
    const bad = createRunEstimate(planned(), ROWS, 0.95);
    batches(ROWS, (r) => (r === 5 ? 3 : flip(r))).forEach((units, b) => feedBatch(bad, b, units));
    expect(runEstimateView(bad).perAgent.b.off).toMatch(/outside \[0, 1\]/);
    expect(runEstimateView(bad).perAgent.a.off).toBeUndefined();
    const few = createRunEstimate({ a: { ...planned().a, units: 2 }, b: { ...planned().b, units: 2 } }, ROWS, 0.95);
    batches(ROWS).forEach((units, b) => feedBatch(few, b, units));
    expect(runEstimateView(few).perAgent.a.off).toMatch(/more tasks than the 2 planned/);
  });
});

describe('run estimate: re-judgment settles pending units', () => {
  /** The first pass with judge failures at `failed`, then re-judgment rows as a round's batch would report them. */
  const failed = [13, 22, 41];
  const firstPass = () => {
    const e = createRunEstimate(planned(), ROWS, 0.95);
    batches(10, (r) => (failed.includes(r) ? null : flip(r))).forEach((units, b) => feedBatch(e, b, units));
    return e;
  };
  const rejudged = (rows: number[], reward: (r: number) => number | null = flip) =>
    pairedUnits(Object.fromEntries(rows.map((r, i) => [i, [agentOf(r), String(Math.floor(r / 4)), old(r), reward(r)] as PairedRow])), [
      'a',
      'b',
    ]);
  const within = (iv: { lo: number; hi: number }, x: number) => iv.lo <= x + 1e-12 && x <= iv.hi + 1e-12;

  it('a re-judged row narrows its unit; once every failure is scored the interval is the exact full-run value', () => {
    const e = firstPass();
    expect(runEstimateView(e).all.tasks.pending).toBe(3);
    const before = runEstimateView(e).all.delta!;
    // A re-judgment that fails again changes nothing.
    settleRejudged(
      e,
      rejudged([13], () => null),
    );
    expect(runEstimateView(e).all.delta).toEqual(before);
    settleRejudged(e, rejudged([13, 22]));
    const mid = runEstimateView(e);
    expect(mid.all.tasks.pending).toBe(1);
    expect(mid.all.delta!.hi - mid.all.delta!.lo).toBeLessThan(before.hi - before.lo);
    expect(within(mid.all.delta!, exactDelta())).toBe(true);
    // Row 41's unit: the range left is what row 41 alone allows (1/60 wide over all agents).
    expect(mid.all.delta!.hi - mid.all.delta!.lo).toBeCloseTo(1 / 60, 12);
    settleRejudged(e, rejudged([41]));
    const end = runEstimateView(e);
    expect(end.all.tasks.pending).toBe(0);
    for (const [agent, view] of [
      [undefined, end.all],
      ['a', end.perAgent.a],
      ['b', end.perAgent.b],
    ] as const) {
      expect(view.delta!.lo).toBeCloseTo(exactDelta(agent), 12);
      expect(view.delta!.hi).toBeCloseTo(exactDelta(agent), 12);
    }
    expect(e.unsettled).toEqual({});
  });

  it('re-judged rows committed before the first pass has entered wait, then settle as if they came after it', () => {
    const first = batches(10, (r) => (failed.includes(r) ? null : flip(r)));
    const streamed = createRunEstimate(planned(), ROWS, 0.95);
    first.slice(0, 3).forEach((units, b) => feedBatch(streamed, b, units));
    const before = runEstimateView(streamed);
    // Rows 13 and 22 re-judged (13 twice: failed again, then scored) while batches 3..5 still run.
    settleRejudged(
      streamed,
      rejudged([13], () => null),
    );
    settleRejudged(streamed, rejudged([13, 22]));
    expect(runEstimateView(streamed)).toEqual(before);
    expect(Object.keys(streamed.early ?? {})).toHaveLength(2);
    first.slice(3).forEach((units, k) => feedBatch(streamed, k + 3, units));
    expect(streamed.early).toBeUndefined();
    // The same as a first pass followed by the same re-judgments.
    const after = firstPass();
    settleRejudged(
      after,
      rejudged([13], () => null),
    );
    settleRejudged(after, rejudged([13, 22]));
    expect(runEstimateView(streamed)).toEqual(runEstimateView(after));
    expect(runEstimateView(streamed).all.tasks.pending).toBe(1);
    // A first pass a --stop-when ended settles at once.
    const stopped = createRunEstimate(planned(), ROWS, 0.95);
    first.slice(0, 3).forEach((units, b) => feedBatch(stopped, b, units));
    settleRejudged(stopped, rejudged([13]), true);
    expect(stopped.early).toBeUndefined();
    expect(runEstimateView(stopped).all.tasks.pending).toBeLessThan(before.all.tasks.pending);
  });

  it('rows of a task cut into several pending units are ambiguous: they stay at the worst case', () => {
    // Task x is cut into two units (the plan interleaves y), each with a failure.
    const task = ['x', 'x', 'y', 'y', 'x', 'x'];
    const row = (r: number, reward: number | null): PairedRow => [0, task[r], old(r), reward];
    const first = pairedUnits(Object.fromEntries(task.map((_, r) => [r, row(r, r === 0 || r === 4 ? null : flip(r))])), ['a']);
    const e = createRunEstimate({ a: plannedOf(first) }, 6, 0.95);
    feedBatch(e, 0, first);
    const before = runEstimateView(e).all;
    expect(before.tasks.pending).toBe(2);
    settleRejudged(e, pairedUnits({ 0: row(0, flip(0)), 1: row(4, flip(4)) }, ['a']));
    expect(runEstimateView(e).all).toEqual(before);
  });

  it('a re-judged reward outside [0, 1] turns the estimate off', () => {
    const e = firstPass();
    settleRejudged(
      e,
      rejudged([13], () => 2),
    );
    expect(runEstimateView(e).all.off).toMatch(/outside \[0, 1\]/);
  });
});

describe('run estimate: the view within the natural ranges', () => {
  it('clamps intervals widened by row weighting to [−1, 1] (delta) and [0, 1] (means, flips)', () => {
    // Nine tasks of 1 row and one of 11: a unit's value ranges up to 11·10/20 = 5.5.
    const rows: Record<number, PairedRow> = {};
    for (let r = 0; r < 20; r++) rows[r] = [0, String(Math.min(r, 9)), r % 2, 1 - (r % 2)];
    const units = pairedUnits(rows, ['a']);
    const e = createRunEstimate({ a: plannedOf(units) }, 20, 0.95);
    feedBatch(e, 0, pairedUnits({ 0: rows[0] }, ['a']));
    const raw = liveIntervals(e.all.est);
    expect(raw.delta.lo < -1 || raw.delta.hi > 1).toBe(true);
    const v = runEstimateView(e).all;
    for (const k of ['newMean', 'flipsUp', 'flipsDown'] as const) {
      expect(v[k]!.lo).toBeGreaterThanOrEqual(0);
      expect(v[k]!.hi).toBeLessThanOrEqual(1);
    }
    expect(v.delta!.lo).toBeGreaterThanOrEqual(-1);
    expect(v.delta!.hi).toBeLessThanOrEqual(1);
    expect(v.delta!.lo).toBeLessThanOrEqual(v.delta!.estimate);
    expect(v.delta!.estimate).toBeLessThanOrEqual(v.delta!.hi);
  });
});
