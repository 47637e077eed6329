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
  totalBatches,
  type Segment,
} from '../../workflows/segments.js';

const plan = (rows: number, name: string): PlanSummary => ({
  planPath: `/w/${name}.bin`,
  sourcePath: '/in/rollouts.jsonl',
  rows,
  agents: ['a'],
  servers: ['rs'],
  rowsPerAgent: { a: rows },
});

describe('segments', () => {
  const first = firstSegment(plan(23, 'plan'), { batchSize: 5 }, 0);
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
