/**
 * The plan's ordering sort records (src/planning/ordered-plan-records.ts): a plan record's bytes
 * come back as they went in, through the codec too, and records sort by rank, then file order.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  compareOrderedPlanRecords,
  orderedPlanRecord,
  orderedPlanRecordCodec,
  writePlanBytes,
} from '../../src/planning/ordered-plan-records.js';
import { encodePlanRecord, PLAN_RECORD_BYTES } from '../../src/planning/plan-file.js';

describe('ordered plan records', () => {
  it("keep a plan record's bytes, through the codec too", () => {
    const plan = Buffer.alloc(3 + PLAN_RECORD_BYTES);
    encodePlanRecord(
      {
        sourceOffset: 2 ** 40 + 5,
        sourceLength: 4_000_000_000,
        sourceLine: 12,
        inputOffset: 0.5,
        inputLength: 7,
        agent: 65_535,
        server: 3,
        sourceDigest: (1n << 64n) - 1n,
        inputDigest: 0x0123456789abcdefn,
      },
      plan,
      3,
    );
    for (const bytes of [plan, Buffer.concat([Buffer.alloc(3), randomBytes(PLAN_RECORD_BYTES)])]) {
      const r = orderedPlanRecord(-1.25e-7, 4_294_967_295, bytes, 3, PLAN_RECORD_BYTES);
      const size = orderedPlanRecordCodec.size(r);
      const disk = Buffer.alloc(size + 2);
      orderedPlanRecordCodec.write(r, disk, 2);
      const back = orderedPlanRecordCodec.read(disk, 2, size);
      expect(back).toEqual(r);
      const out = Buffer.alloc(PLAN_RECORD_BYTES);
      writePlanBytes(back, out, 0);
      expect(out).toEqual(bytes.subarray(3));
    }
  });

  it('sort by rank, then ordinal', () => {
    const bytes = Buffer.alloc(8);
    const rec = (rank: number, ordinal: number) => orderedPlanRecord(rank, ordinal, bytes, 0, 8);
    const sorted = [rec(0.5, 9), rec(-3, 4), rec(0.5, 2), rec(-3, 1), rec(1e9, 0)].sort(compareOrderedPlanRecords);
    expect(sorted.map((r) => [r[0], r[1]])).toEqual([
      [-3, 1],
      [-3, 4],
      [0.5, 2],
      [0.5, 9],
      [1e9, 0],
    ]);
  });
});
