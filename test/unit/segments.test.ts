/** The verify window's segments: one numbering of batches over the first plan and the re-judgment plans. */
import { describe, expect, it } from 'vitest';
import type { PlanSummary } from '../../src/contract/run-spec.js';
import {
  batchesOf,
  doneSegments,
  firstSegment,
  nextSegment,
  rowsOfBatch,
  segmentOf,
  partsOf,
  tailOf,
  totalBatches,
  type Segment,
} from '../../workflows/segments.js';
import { windowShape } from '../../workflows/window.js';

const plan = (rows: number, name: string): PlanSummary => ({
  planPath: `/w/${name}.bin`,
  sourcePath: '/in/rollouts.jsonl',
  rows,
  agents: ['a'],
  servers: ['rs'],
  rowsPerAgent: { a: rows },
});

describe('segments', () => {
  const noTail = { batchSize: 5, concurrency: 10, rejudge: false, maxAttempts: 3 };
  const first = firstSegment(plan(23, 'plan'), noTail, 0);
  const second: Segment = {
    round: 1,
    plan: plan(7, 'plan-r2-s5'),
    first: totalBatches([first]),
    batches: batchesOf(7, 5),
    launched: 0,
    dueAt: 10,
  };
  const third: Segment = {
    round: 1,
    plan: plan(1, 'plan-r2-s7'),
    first: totalBatches([first, second]),
    batches: 1,
    launched: 0,
    dueAt: 20,
  };
  const all = [first, second, third];

  it('number the batches across the plans: 5 of the first plan, then 2, then 1', () => {
    expect([first.first, first.batches, second.first, second.batches, third.first]).toEqual([0, 5, 5, 2, 7]);
    expect(totalBatches(all)).toBe(8);
    expect(totalBatches([])).toBe(0);
  });

  it("find each batch's segment and its rows in that segment's plan, the last batch of each plan short", () => {
    expect([0, 4, 5, 6, 7].map((b) => segmentOf(all, b).plan.planPath)).toEqual([
      '/w/plan.bin',
      '/w/plan.bin',
      '/w/plan-r2-s5.bin',
      '/w/plan-r2-s5.bin',
      '/w/plan-r2-s7.bin',
    ]);
    expect(rowsOfBatch(first, 4, 5)).toEqual({ from: 20, to: 23 });
    expect(rowsOfBatch(second, 5, 5)).toEqual({ from: 0, to: 5 });
    expect(rowsOfBatch(second, 6, 5)).toEqual({ from: 5, to: 7 });
    expect(rowsOfBatch(third, 7, 5)).toEqual({ from: 0, to: 1 });
  });

  it("cut the first plan's last window of batches in quarters, four times as many in the window, only when the run re-judges", () => {
    const spec = { batchSize: 1000, concurrency: 128, rejudge: true, maxAttempts: 3 };
    // 128 lanes: 8 batches of 16 lanes, so the last 8,000 rows go in 32 batches of 250 rows and 4 lanes.
    expect(tailOf(50_500, spec)).toEqual({ from: 42_000, size: 250, parts: 4 });
    const seg = firstSegment(plan(50_500, 'plan'), spec, 0);
    expect(seg.batches).toBe(42 + 34);
    expect([41, 42, 43, 75].map((b) => rowsOfBatch(seg, b, 1000))).toEqual([
      { from: 41_000, to: 42_000 },
      { from: 42_000, to: 42_250 },
      { from: 42_250, to: 42_500 },
      { from: 50_250, to: 50_500 },
    ]);
    expect([41, 42, 75].map((b) => partsOf(seg, b, 1000))).toEqual([1, 4, 4]);
    // The window holds four times the batches, so a quarter of the lanes each; its last few spread the lanes again.
    expect(windowShape(128, 1000, 34, 4)).toEqual({ window: 32, parallelism: 4 });
    expect(windowShape(128, 1000, 2, 4)).toEqual({ window: 2, parallelism: 64 });
    // Every row in exactly one batch, in order.
    const ranges = [...Array(seg.batches).keys()].map((b) => rowsOfBatch(seg, b, 1000));
    expect(ranges.every((r, i) => r.from === (i === 0 ? 0 : ranges[i - 1].to) && r.to > r.from)).toBe(true);
    expect(ranges.at(-1)!.to).toBe(50_500);
    // A plan smaller than a window is all tail.
    expect(tailOf(3_000, spec)).toEqual({ from: 0, size: 250, parts: 4 });
    expect(batchesOf(3_000, 1000, tailOf(3_000, spec))).toBe(12);
    // 256 lanes: 16 batches, the last 16,000 rows in quarters, 32 of them in flight (MAX_WINDOW) with 8 lanes each; 512 and 1024: none.
    expect(tailOf(50_000, { ...spec, concurrency: 256 })).toEqual({ from: 34_000, size: 250, parts: 4 });
    expect(windowShape(256, 1000, 64, 4)).toEqual({ window: 32, parallelism: 8 });
    expect(tailOf(50_000, { ...spec, concurrency: 512 })).toBeUndefined();
    expect(tailOf(50_000, { ...spec, concurrency: 1024 })).toBeUndefined();
    // No tail without re-judgment, nor when a part would be smaller than a full share.
    expect(tailOf(50_000, { ...spec, rejudge: false })).toBeUndefined();
    expect(tailOf(50_000, { ...spec, maxAttempts: 1 })).toBeUndefined();
    expect(tailOf(50_000, { ...spec, batchSize: 60 })).toBeUndefined();
    expect(firstSegment(plan(50_000, 'plan'), { ...spec, rejudge: false }, 0)).not.toHaveProperty('tail');
    expect(partsOf(first, 4, 5)).toBe(1);
  });

  it('refuse a batch number before the first segment, past the last, or of a dropped segment', () => {
    expect(() => segmentOf([second], 0)).toThrow('batch 0 is in no segment');
    expect(() => segmentOf(all, 8)).toThrow('batch 8 is in no segment');
    expect(() => segmentOf([first, third], 6)).toThrow('batch 6 is in no segment');
  });

  it('launch a due re-judgment segment before the rest of the first plan, the oldest first, then the first plan', () => {
    const segs = [
      { ...first, launched: 2 },
      { ...second, launched: 0 },
      { ...third, launched: 0 },
    ];
    expect(nextSegment(segs, () => true)?.first).toBe(5);
    expect(nextSegment(segs, (s) => s.first !== 5)?.first).toBe(7);
    expect(nextSegment(segs, (s) => s.first === 0)?.first).toBe(0);
    expect(nextSegment(segs, () => false)).toBeNull();
    // Launched whole: the next one.
    expect(nextSegment([segs[0], { ...second, launched: 2 }, segs[2]], () => true)?.first).toBe(7);
    expect(
      nextSegment(
        [
          { ...first, launched: 5 },
          { ...second, launched: 2 },
          { ...third, launched: 1 },
        ],
        () => true,
      ),
    ).toBeNull();
  });

  it('drop only the re-judgment segments launched whole and idle, never the first or the last', () => {
    const fourth: Segment = { ...third, first: 8, plan: plan(1, 'plan-r3-s8'), round: 2, launched: 1 };
    const segs = [{ ...first, launched: 5 }, { ...second, launched: 2 }, { ...third, launched: 1 }, fourth];
    expect([...doneSegments(segs, () => false)]).toEqual([5, 7]);
    expect([...doneSegments(segs, (s) => s.first === 5)]).toEqual([7]);
    expect([...doneSegments([segs[0], { ...second, launched: 1 }, segs[2], fourth], () => false)]).toEqual([7]);
    expect([...doneSegments(segs.slice(0, 2), () => false)]).toEqual([]);
  });
});
