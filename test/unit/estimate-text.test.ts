/** The live estimate as `reverify status` and the Temporal UI print it (src/contract/estimate-text.ts). */
import { describe, expect, it } from 'vitest';
import { deltaText, estimateLines, estimateText, FILE_ORDER_NOTE } from '../../src/contract/estimate-text.js';
import { createRunEstimate, runEstimateView } from '../../src/stats/run-estimate.js';

const iv = (estimate: number, lo: number, hi: number) => ({ estimate, lo, hi });
const view = {
  tasks: { seen: 30, pending: 2, planned: 100 },
  oldMean: iv(0.5, 0.5, 0.5),
  newMean: iv(0.531, 0.4, 0.6),
  delta: iv(-0.031, -0.066, 0.004),
  flipsUp: iv(0.05, 0, 0.1),
  flipsDown: iv(0.02, 0, 0.08),
};

describe('estimate text', () => {
  it('one line per agent after a heading with the level: delta, new, old, flips, tasks', () => {
    expect(
      estimateLines({ confidence: 0.95, all: view, perAgent: { b: view, a: { tasks: view.tasks, off: 'no tasks planned' } } }),
    ).toEqual([
      'Estimate (95% confidence sequences, new − old per task; docs/statistics.md):',
      '  all: delta −0.031 [−0.066, +0.004], new 0.531 [0.400, 0.600], old 0.500, flips 0→1 0.050 [0.000, 0.100], 1→0 0.020 [0.000, 0.080]; 30/100 tasks (2 pending)',
      '  a: no estimate: no tasks planned',
      '  b: delta −0.031 [−0.066, +0.004], new 0.531 [0.400, 0.600], old 0.500, flips 0→1 0.050 [0.000, 0.100], 1→0 0.020 [0.000, 0.080]; 30/100 tasks (2 pending)',
    ]);
  });
  it('an exact value is said to be exact', () => {
    expect(estimateText({ ...view, delta: iv(0.02, 0.02, 0.02), tasks: { seen: 100, pending: 0, planned: 100 } })).toMatch(
      /^delta \+0\.020 \(exact\), .*; 100\/100 tasks$/,
    );
  });
  it('in file order the progress line shows the delta so far without an interval, and status says why', () => {
    const random = { confidence: 0.95, all: view, perAgent: {} };
    expect(deltaText(random)).toBe('Δ −0.031 [−0.066, +0.004]');
    const file = { ...random, fileOrder: true };
    expect(deltaText(file)).toBe('Δ so far −0.031 (file order)');
    expect(estimateLines(file)[1]).toBe(`  ${FILE_ORDER_NOTE}`);
    expect(estimateLines(random)).not.toContain(`  ${FILE_ORDER_NOTE}`);
    // The workflow's estimate carries the order into its view.
    const planned = { a: { units: 4, rows: 4, maxRows: 1, oldSum: 2, invalid: 0 } };
    expect(runEstimateView(createRunEstimate(planned, 4, 0.95, true)).fileOrder).toBe(true);
    expect(runEstimateView(createRunEstimate(planned, 4, 0.95)).fileOrder).toBeUndefined();
  });
});
