/**
 * The plan's verdict file (src/planning/plan-verdicts.ts): read back in ordinal order through one
 * cursor, across buckets; a later verdict for an ordinal wins, an ordinal never set is not
 * yielded, and a planned row's record bytes, attempts word and rank are those it was set with.
 */
import { describe, expect, it } from 'vitest';
import { encodePlanRecord, PLAN_RECORD_BYTES, type PlanRecord } from '../../src/planning/plan-file.js';
import { Verdict, VerdictFile } from '../../src/planning/plan-verdicts.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-verdicts-');

const plan = (i: number): PlanRecord => ({
  sourceOffset: 1000 * i,
  sourceLength: 7 + i,
  sourceLine: i + 1,
  inputOffset: 2 ** 40 + i,
  inputLength: 3,
  agent: i % 3,
  server: 1,
  sourceDigest: (BigInt(i) * 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn,
  inputDigest: BigInt(i),
});

describe('VerdictFile', () => {
  it('gives every ordinal in order, across buckets, with the last verdict set and its plan bytes and rank', () => {
    const count = 70_000; // three buckets of 32,768
    const file = new VerdictFile(`${tmp.freshDir()}/v`);
    try {
      for (let i = count - 1; i >= 0; i -= 3) file.set(i, Verdict.Plan, plan(i), i / 7, 2 ** 31 + i);
      for (let i = 1; i < count; i += 1000) file.set(i, Verdict.Duplicate);
      file.set(count - 1, Verdict.Error); // a later verdict for the same ordinal wins
      const want = Buffer.alloc(PLAN_RECORD_BYTES);
      let seen = 0;
      for (const row of file.inOrder(count)) {
        expect(row.ordinal).toBe(seen++);
        const i = row.ordinal;
        // Later sets win: the error, then the duplicates, over the plans.
        let expected = (count - 1 - i) % 3 === 0 ? Verdict.Plan : Verdict.NotYielded;
        if (i % 1000 === 1) expected = Verdict.Duplicate;
        if (i === count - 1) expected = Verdict.Error;
        expect(row.verdict).toBe(expected);
        if (expected !== Verdict.Plan) {
          expect(row.rank()).toBe(0);
          expect(row.attemptsWord()).toBe(0);
          continue;
        }
        encodePlanRecord(plan(i), want, 0);
        expect(row.planBytes.subarray(row.planAt, row.planAt + PLAN_RECORD_BYTES)).toEqual(want);
        expect(row.rank()).toBe(i / 7);
        expect(row.attemptsWord()).toBe(2 ** 31 + i);
        // The attempts word follows the plan record (an ordering sort carries both as one run of words).
        expect(row.planBytes.readUInt32LE(row.planAt + PLAN_RECORD_BYTES)).toBe(2 ** 31 + i);
      }
      expect(seen).toBe(count);
    } finally {
      file.dispose();
    }
  });
});
