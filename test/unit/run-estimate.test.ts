/** The run's live estimate as the workflow keeps it (src/stats/run-estimate.ts): order, splits, pending, refusals. */
import { describe, expect, it } from 'vitest';
import { pairedUnits, type PairedRow } from '../../activities/verify-batch/paired-units.js';
import type { PairedUnit } from '../../src/contract/batch-result.js';
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
