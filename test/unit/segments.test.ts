/** The verify window's segments: one numbering of batches over the first plan and the re-judgment plans. */
import { describe, expect, it } from 'vitest';
import type { PlanSummary } from '../../src/contract/run-spec.js';
import { batchesOf, firstSegment, rowsOfBatch, segmentOf, totalBatches, type Segment } from '../../workflows/segments.js';

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
  const second: Segment = { round: 1, plan: plan(7, 'plan-r2-s1'), first: totalBatches([first]), batches: batchesOf(7, 5), dueAt: 10 };
  const third: Segment = { round: 1, plan: plan(1, 'plan-r2-s2'), first: totalBatches([first, second]), batches: 1, dueAt: 20 };
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
      '/w/plan-r2-s1.bin',
      '/w/plan-r2-s1.bin',
      '/w/plan-r2-s2.bin',
    ]);
    expect(rowsOfBatch(first, 4, 5)).toEqual({ from: 20, to: 23 });
    expect(rowsOfBatch(second, 5, 5)).toEqual({ from: 0, to: 5 });
    expect(rowsOfBatch(second, 6, 5)).toEqual({ from: 5, to: 7 });
    expect(rowsOfBatch(third, 7, 5)).toEqual({ from: 0, to: 1 });
  });

  it('refuse a batch number before the first segment', () => {
    expect(() => segmentOf([second], 0)).toThrow('batch 0 is in no segment');
  });
});
