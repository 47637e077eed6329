/** A batch's paired units in their compact form (src/contract/paired-wire.ts): the estimate is the same as fed from the units themselves. */
import { describe, expect, it } from 'vitest';
import { pairedUnits, type PairedRow } from '../../activities/verify-batch/paired-units.js';
import type { PairedUnit } from '../../src/contract/batch-result.js';
import { decodePaired, encodePaired } from '../../src/contract/paired-wire.js';
import { settleRejudged } from '../../src/stats/rejudged-units.js';
import { createRunEstimate, feedBatch, plannedOf, runEstimateView, type RunEstimate } from '../../src/stats/run-estimate.js';

const ROWS = 90;
/** Tasks of `per` rollouts; agents by task parity; a judge failure (null) on every 13th row. */
function batches(size: number, per: number, fail: (r: number) => boolean): PairedUnit[][] {
  const out: PairedUnit[][] = [];
  for (let from = 0; from < ROWS; from += size) {
    const rows: Record<number, PairedRow> = {};
    for (let r = from; r < Math.min(ROWS, from + size); r++) {
      const old = r % 3 === 0 ? 1 : 0;
      rows[r - from] = [Math.floor(r / per) % 2, String(Math.floor(r / per)), old, fail(r) ? null : (r * 7) % 5 === 0 ? 1 - old : old];
    }
    out.push(pairedUnits(rows, ['a', 'b']));
  }
  return out;
}

function fed(bs: PairedUnit[][], per: number, through: (units: PairedUnit[], round: number) => PairedUnit[]): RunEstimate {
  const all = batches(ROWS, per, () => false)[0];
  const planned = { a: plannedOf(all.filter((u) => u.agent === 'a')), b: plannedOf(all.filter((u) => u.agent === 'b')) };
  const e = createRunEstimate(planned, ROWS, 0.95);
  const order = bs.map((_, b) => b).reverse(); // out of order: later batches wait
  for (const b of order) feedBatch(e, b, through(bs[b], 0));
  // The re-judgment round scores every failed row (one row per unit, task read).
  const rejudged = batches(ROWS, per, () => false)
    .flat()
    .filter((u) => u.rows === 1);
  settleRejudged(e, through(rejudged, 1));
  return e;
}

describe('paired units on the wire', () => {
  for (const [size, per] of [
    [7, 1],
    [10, 3],
    [4, 6],
    [90, 2],
  ] as const) {
    it(`batches of ${size}, tasks of ${per} rollouts, judge failures: the estimate and its kept units equal the objects'`, () => {
      const fail = (r: number) => r % 13 === 5;
      const bs = batches(size, per, fail);
      const direct = fed(bs, per, (u) => u);
      const viaWire = fed(bs, per, (u, round) => decodePaired(JSON.parse(JSON.stringify(encodePaired(u, round)))));
      expect(runEstimateView(viaWire)).toEqual(runEstimateView(direct));
      expect(viaWire.unsettled).toEqual(direct.unsettled);
      expect(runEstimateView(direct).all.tasks.seen).toBeGreaterThan(0);
    });
  }

  it('drops the task only of units read by nothing: inside the batch, every row known and valid, first round', () => {
    const units = batches(ROWS, 1, (r) => r === 4)[0].slice(0, 6);
    const wire = encodePaired(units, 0);
    expect(wire.tasks).toEqual([
      [0, '0'],
      [4, '4'],
      [5, '5'],
    ]);
    expect(decodePaired(wire).map((u) => u.task)).toEqual(['0', '', '', '', '4', '5']);
    expect(encodePaired(units, 1).tasks.map(([i]) => i)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(decodePaired(undefined)).toEqual([]);
    expect(decodePaired(encodePaired([], 0))).toEqual([]);
  });

  it('writes each distinct value once and a unit as one digit: at most a twentieth of the objects for a unit per row', () => {
    const units = batches(ROWS, 1, () => false)[0];
    const wire = encodePaired(units, 0);
    expect(wire.width).toBe(1);
    expect(wire.order).toHaveLength(units.length);
    expect(wire.values.length).toBeLessThanOrEqual(8); // agent × old reward × new reward
    expect(JSON.stringify(wire).length * 20).toBeLessThan(JSON.stringify(units).length);
  });

  for (const distinct of [64, 65, 4096, 4097]) {
    it(`${distinct} distinct values (fractional sums) travel exactly, in ${distinct > 4096 ? 3 : distinct > 64 ? 2 : 1} digit(s) a unit`, () => {
      const units: PairedUnit[] = Array.from({ length: distinct + 7 }, (_, i) => {
        const v = i % distinct;
        return {
          agent: v % 2 ? 'b' : 'a',
          task: `t${i}`,
          rows: 3,
          known: 3,
          oldSum: v / 7,
          newSum: 1 + v / 9,
          up: v % 3,
          down: 0,
          invalid: 0,
        };
      });
      const wire = JSON.parse(JSON.stringify(encodePaired(units, 1))) as ReturnType<typeof encodePaired>;
      expect(wire.values).toHaveLength(distinct);
      expect(wire.width).toBe(distinct > 4096 ? 3 : distinct > 64 ? 2 : 1);
      expect(decodePaired(wire)).toEqual(units);
    });
  }
});
