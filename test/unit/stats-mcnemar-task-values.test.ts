import { describe, expect, it } from 'vitest';
import { clusteredMcNemar, taskFlipsOf } from '../../src/stats/mcnemar-clustered.js';
import { meanWithUnknown, rowWeightedRange, rowWeightedValue, taskValueRange, widenForUnknown } from '../../src/stats/task-values.js';

describe('clustered McNemar test (Durkalski et al. 2003)', () => {
  it("one row per task is McNemar's test: Agresti's approval example (794, 150, 86, 570) gives z² = 64²/236 = 17.356", () => {
    // Agresti, An Introduction to Categorical Data Analysis: approval of the Prime Minister in two
    // surveys of the same 1600 people; 150 approve→disapprove, 86 disapprove→approve, z = 4.17.
    const tasks = [
      ...Array.from({ length: 794 }, () => ({ rows: 1, pf: 0, fp: 0 })),
      ...Array.from({ length: 150 }, () => ({ rows: 1, pf: 1, fp: 0 })),
      ...Array.from({ length: 86 }, () => ({ rows: 1, pf: 0, fp: 1 })),
      ...Array.from({ length: 570 }, () => ({ rows: 1, pf: 0, fp: 0 })),
    ];
    const t = clusteredMcNemar(tasks);
    expect(t.statistic).toBeCloseTo(4096 / 236, 10);
    expect(Math.sqrt(t.statistic!)).toBeCloseTo(4.17, 2);
    expect(t.pValue).toBeGreaterThan(3.0e-5);
    expect(t.pValue).toBeLessThan(3.2e-5);
    expect(t).toMatchObject({ pf: 150, fp: 86, tasks: 1600 });
  });

  it('a worked clustered example by hand: d = 2/4, 1/2, −1/5 gives (0.8)² / 0.54', () => {
    const t = clusteredMcNemar([
      { rows: 4, pf: 2, fp: 0 },
      { rows: 2, pf: 1, fp: 0 },
      { rows: 5, pf: 0, fp: 1 },
      { rows: 3, pf: 0, fp: 0 },
    ]);
    expect(t.statistic).toBeCloseTo(0.64 / 0.54, 12);
    expect(t.pValue).toBeGreaterThan(0.27);
    expect(t.pValue).toBeLessThan(0.28);
  });

  it('clustering weakens the evidence: the same 20 flips inside 2 tasks, not 20, are not significant', () => {
    const spread = clusteredMcNemar(Array.from({ length: 20 }, () => ({ rows: 1, pf: 1, fp: 0 })));
    const clumped = clusteredMcNemar([
      { rows: 10, pf: 10, fp: 0 },
      { rows: 10, pf: 0, fp: 0 },
      { rows: 10, pf: 10, fp: 0 },
    ]);
    expect(spread.statistic).toBe(20);
    expect(clumped.statistic).toBeCloseTo(2, 12);
    expect(clumped.pValue!).toBeGreaterThan(0.15);
  });

  it('no flips, or flips that cancel in every task: no statistic', () => {
    expect(clusteredMcNemar([{ rows: 3, pf: 0, fp: 0 }]).statistic).toBeNull();
    expect(clusteredMcNemar([{ rows: 4, pf: 1, fp: 1 }])).toMatchObject({ statistic: null, pValue: null, pf: 1, fp: 1 });
    expect(() => clusteredMcNemar([{ rows: 1, pf: 1, fp: 1 }])).toThrow(/cannot have 1 \+ 1 flips/);
  });

  it('counts flips per task from paired pass/fail rows', () => {
    const flips = taskFlipsOf([true, true, false, false, true], [false, true, true, false, false], ['a', 'a', 'b', 'b', 'a']);
    expect(flips).toEqual([
      { rows: 3, pf: 2, fp: 0 },
      { rows: 2, pf: 0, fp: 1 },
    ]);
  });
});

describe('task values and the worst case of values not known yet', () => {
  it('a mean with unknown values spans every unknown at a to every unknown at b', () => {
    expect(meanWithUnknown(3, 4, 1, 0, 1)).toEqual({ lo: 0.6, hi: 0.8 });
    expect(meanWithUnknown(0, 0, 0, -1, 1)).toEqual({ lo: -1, hi: 1 });
    const wide = widenForUnknown({ lo: 0.4, hi: 0.6 }, 8, 2, 0, 1);
    expect(wide.lo).toBeCloseTo(0.32, 12);
    expect(wide.hi).toBeCloseTo(0.68, 12);
  });

  it('row-weighted task values average, over tasks, to the mean over rows; their range holds every task', () => {
    const tasks = [[1, 0, 1], [0], [1, 1], [0, 0, 0, 1]];
    const rows = tasks.flat();
    const plan = { tasks: tasks.length, rows: rows.length, minRows: 1, maxRows: 4 };
    const values = tasks.map((t) =>
      rowWeightedValue(
        t.reduce((a, b) => a + b, 0),
        plan,
      ),
    );
    expect(values.reduce((a, b) => a + b, 0) / tasks.length).toBeCloseTo(rows.reduce((a, b) => a + b, 0) / rows.length, 12);
    const range = rowWeightedRange(0, 1, plan);
    expect(range).toEqual({ lo: 0, hi: (4 * 4) / 10 });
    expect(rowWeightedRange(-1, 1, plan)).toEqual({ lo: -1.6, hi: 1.6 });
    for (const v of values) expect(v >= range.lo && v <= range.hi).toBe(true);
  });

  it("a task's value with rows still pending: its mean's range, or the row-weighted one", () => {
    expect(taskValueRange(2, 4, 1, 0, 1)).toEqual({ lo: 0.5, hi: 0.75 });
    expect(taskValueRange(1, 4, 2, -1, 1)).toEqual({ lo: -0.25, hi: 0.75 });
    const plan = { tasks: 5, rows: 20, minRows: 4, maxRows: 4 };
    expect(taskValueRange(2, 4, 1, 0, 1, plan)).toEqual({ lo: 0.5, hi: 0.75 });
  });
});
