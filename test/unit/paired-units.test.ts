/** A batch's answered rows summed per task for the live estimate (activities/verify-batch/paired-units.ts). */
import { describe, expect, it } from 'vitest';
import { pairedUnits, type PairedRow } from '../../activities/verify-batch/paired-units.js';
import { pairedFactsOfLine } from '../../src/contract/paired-facts.js';

const pairedFacts = (row: string) => pairedFactsOfLine(Buffer.from(row));

describe('pairedUnits', () => {
  it('sums consecutive rows of one agent and task in row order, whatever order they were noted in', () => {
    const rows: Record<number, PairedRow> = {};
    // Noted out of order (lanes answer in any order); rows 0-2 task 7 of agent a, 3 agent b, 4-5 task 8 of a.
    rows[4] = [0, '8', 1, 0];
    rows[1] = [0, '7', 0, 1];
    rows[3] = [1, '7', 1, 1];
    rows[0] = [0, '7', 0, 0.25];
    rows[2] = [0, '7', 1, null];
    rows[5] = [0, '8', 0.5, 0.5];
    expect(pairedUnits(rows, ['a', 'b'])).toEqual([
      // Row 2 has no new reward (a judge failure): counted in rows and oldSum, not known.
      { agent: 'a', task: '7', rows: 3, known: 2, oldSum: 1, newSum: 1.25, up: 1, down: 0, invalid: 0 },
      { agent: 'b', task: '7', rows: 1, known: 1, oldSum: 1, newSum: 1, up: 0, down: 0, invalid: 0 },
      // 0.5 is a pass (PASS_THRESHOLD): 0.5 → 0.5 is no flip; 1 → 0 is one down.
      { agent: 'a', task: '8', rows: 2, known: 2, oldSum: 1.5, newSum: 0.5, up: 0, down: 1, invalid: 0 },
    ]);
  });

  it('counts rows whose old or new reward is missing or outside [0, 1] as invalid, apart from the sums', () => {
    const rows: Record<number, PairedRow> = { 0: [0, '1', null, 1], 1: [0, '1', 0, 2], 2: [0, '1', 1, 1] };
    expect(pairedUnits(rows, ['a'])).toEqual([
      { agent: 'a', task: '1', rows: 3, known: 1, oldSum: 1, newSum: 1, up: 0, down: 0, invalid: 2 },
    ]);
  });

  it('is empty for no rows', () => {
    expect(pairedUnits({}, ['a'])).toEqual([]);
  });
});

describe('pairedFactsOfLine', () => {
  it("reads a rollout row's task (raw text) and numeric reward", () => {
    expect(pairedFacts('{"_ng_task_index": 12, "_ng_rollout_index": 0, "reward": 0.5, "response": {}}')).toEqual({
      task: '12',
      reward: 0.5,
    });
    expect(pairedFacts('{"_ng_task_index":3,"reward":true}')).toEqual({ task: '3', reward: null });
    expect(pairedFacts('{"reward":null}')).toEqual({ task: '', reward: null });
    expect(pairedFacts('{"_ng_task_index":1}')).toEqual({ task: '1', reward: null });
  });
});
