import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  decodePlanRecord,
  encodePlanRecord,
  ATIF_PLAN_RECORD_BYTES,
  PLAN_RECORD_BYTES,
  PlanWriter,
  readPlanRange,
  withPlanReader,
  type PlanRecord,
} from '../../src/planning/plan-file.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-plan-');
const planPath = () => tmp.unique('plan-', '.bin');

/** A distinct, checkable record for index i, with offsets far beyond 2^32. */
function rec(i: number): PlanRecord {
  return {
    sourceOffset: 2 ** 33 + i * 1_000_003,
    sourceLength: (i * 7919) % 2 ** 32,
    sourceLine: i + 1,
    inputOffset: 2 ** 40 + i * 997,
    inputLength: 100 + (i % 50_000),
    agent: i % 65_536,
    server: (i * 31) % 65_536,
    sourceDigest: (BigInt(i) * 0x9e3779b97f4a7c15n) % 2n ** 64n,
    inputDigest: 2n ** 64n - 1n - BigInt(i),
  };
}

async function writePlan(path: string, n: number): Promise<PlanWriter> {
  const w = await PlanWriter.create(path);
  for (let i = 0; i < n; i++) await w.add(rec(i));
  await w.close();
  return w;
}

describe('encodePlanRecord / decodePlanRecord', () => {
  it('records are 48 bytes (two 64-bit digests); ATIF records 64 (the trajectory length and digest)', () => {
    expect(PLAN_RECORD_BYTES).toBe(48);
    expect(ATIF_PLAN_RECORD_BYTES).toBe(64);
  });

  it('an ATIF record round-trips its trajectory length and digest', () => {
    const buf = Buffer.alloc(ATIF_PLAN_RECORD_BYTES);
    const r = { ...rec(7), trajectoryLength: 123_456, trajectoryDigest: 0xfedcba9876543210n };
    encodePlanRecord(r, buf, 0);
    expect(decodePlanRecord(buf, 0, ATIF_PLAN_RECORD_BYTES)).toEqual(r);
  });

  it('round trip of extreme values: offsets beyond 2^32 (up to 2^53 - 1), max uint32 lengths, max uint16 agent/server', () => {
    const cases: PlanRecord[] = [
      {
        sourceOffset: 0,
        sourceLength: 0,
        sourceLine: 0,
        inputOffset: 0,
        inputLength: 0,
        agent: 0,
        server: 0,
        sourceDigest: 0n,
        inputDigest: 0n,
      },
      {
        sourceOffset: 2 ** 32,
        sourceLength: 2 ** 32 - 1,
        sourceLine: 2 ** 32 - 1,
        inputOffset: 2 ** 32 + 1,
        inputLength: 2 ** 32 - 1,
        agent: 65_535,
        server: 65_535,
        sourceDigest: 2n ** 64n - 1n,
        inputDigest: 2n ** 64n - 1n,
      },
      {
        sourceOffset: 5 * 2 ** 40 + 12_345,
        sourceLength: 1,
        sourceLine: 10_000_000,
        inputOffset: Number.MAX_SAFE_INTEGER,
        inputLength: 3 << 20,
        agent: 1,
        server: 65_534,
        sourceDigest: 1n,
        inputDigest: 0x8000000000000000n,
      },
    ];
    for (const r of cases) {
      const buf = Buffer.alloc(PLAN_RECORD_BYTES);
      encodePlanRecord(r, buf, 0);
      expect(decodePlanRecord(buf, 0)).toEqual(r);
    }
  });

  it('records at consecutive positions of one buffer do not overlap', () => {
    const buf = Buffer.alloc(PLAN_RECORD_BYTES * 3 + 5);
    const rs = [rec(1), rec(2), rec(65_535)];
    rs.forEach((r, i) => encodePlanRecord(r, buf, 5 + i * PLAN_RECORD_BYTES));
    expect(rs.map((_, i) => decodePlanRecord(buf, 5 + i * PLAN_RECORD_BYTES))).toEqual(rs);
    expect(buf.subarray(0, 5)).toEqual(Buffer.alloc(5)); // bytes before the first record untouched
  });

  it('the layout is little-endian and fixed (the file is read by other workers)', () => {
    const buf = Buffer.alloc(PLAN_RECORD_BYTES);
    encodePlanRecord(
      {
        sourceOffset: 1,
        sourceLength: 2,
        sourceLine: 3,
        inputOffset: 4,
        inputLength: 5,
        agent: 6,
        server: 0x0102,
        sourceDigest: 7n,
        inputDigest: 8n,
      },
      buf,
      0,
    );
    expect(buf.readDoubleLE(0)).toBe(1);
    expect(buf.readUInt32LE(8)).toBe(2);
    expect(buf.readUInt32LE(12)).toBe(3);
    expect(buf.readDoubleLE(16)).toBe(4);
    expect(buf.readUInt32LE(24)).toBe(5);
    expect(buf.readUInt16LE(28)).toBe(6);
    expect([buf[30], buf[31]]).toEqual([0x02, 0x01]);
    expect(buf.readBigUInt64LE(32)).toBe(7n);
    expect(buf.readBigUInt64LE(40)).toBe(8n);
  });

  it('out-of-range values are rejected, not silently wrapped', () => {
    const buf = Buffer.alloc(PLAN_RECORD_BYTES);
    expect(() => encodePlanRecord({ ...rec(0), agent: 65_536 }, buf, 0)).toThrow(RangeError);
    expect(() => encodePlanRecord({ ...rec(0), sourceLength: 2 ** 32 }, buf, 0)).toThrow(RangeError);
  });
});

describe('PlanWriter + readPlanRange', () => {
  it('10,000 records (more than one 4096-record buffer): count, file size, every record back', async () => {
    const p = planPath();
    const w = await writePlan(p, 10_000);
    expect(w.count).toBe(10_000);
    expect(statSync(p).size).toBe(10_000 * PLAN_RECORD_BYTES);
    const all = await readPlanRange(p, 0, 10_000, PLAN_RECORD_BYTES);
    expect(all.length).toBe(10_000);
    const same = (a: PlanRecord, b: PlanRecord) => (Object.keys(b) as Array<keyof PlanRecord>).every((k) => a[k] === b[k]);
    for (let i = 0; i < all.length; i++) if (!same(all[i], rec(i))) expect(all[i]).toEqual(rec(i));
    // the bytes on disk are exactly the encoded records, in order
    const raw = readFileSync(p);
    expect(decodePlanRecord(raw, 9_999 * PLAN_RECORD_BYTES)).toEqual(rec(9_999));
  });

  it('a middle range, one across the buffer boundary (4096), and the last records', async () => {
    const p = planPath();
    await writePlan(p, 10_000);
    const expected = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => rec(from + k));
    expect(await readPlanRange(p, 5_000, 5_200, PLAN_RECORD_BYTES)).toEqual(expected(5_000, 5_200));
    expect(await readPlanRange(p, 4_090, 4_100, PLAN_RECORD_BYTES)).toEqual(expected(4_090, 4_100));
    expect(await readPlanRange(p, 8_190, 8_200, PLAN_RECORD_BYTES)).toEqual(expected(8_190, 8_200));
    expect(await readPlanRange(p, 9_999, 10_000, PLAN_RECORD_BYTES)).toEqual([rec(9_999)]);
    expect(await readPlanRange(p, 0, 1, PLAN_RECORD_BYTES)).toEqual([rec(0)]);
  });

  it('an empty range gives no records', async () => {
    const p = planPath();
    await writePlan(p, 10);
    expect(await readPlanRange(p, 3, 3, PLAN_RECORD_BYTES)).toEqual([]);
  });

  it('exactly one full buffer (4096 records) and 4097 records', async () => {
    for (const n of [4096, 4097]) {
      const p = planPath();
      const w = await writePlan(p, n);
      expect(w.count).toBe(n);
      expect(statSync(p).size).toBe(n * PLAN_RECORD_BYTES);
      expect(await readPlanRange(p, n - 2, n, PLAN_RECORD_BYTES)).toEqual([rec(n - 2), rec(n - 1)]);
    }
  });

  it('a plan of no records is an empty file', async () => {
    const p = planPath();
    const w = await writePlan(p, 0);
    expect(w.count).toBe(0);
    expect(statSync(p).size).toBe(0);
  });

  it('reading past the end throws, naming the file and the range', async () => {
    const p = planPath();
    await writePlan(p, 100);
    await expect(readPlanRange(p, 95, 101, PLAN_RECORD_BYTES)).rejects.toThrow(`plan file ${p} is shorter than expected (records 95..101)`);
    await expect(readPlanRange(p, 100, 101, PLAN_RECORD_BYTES)).rejects.toThrow(/shorter than expected/);
    await expect(readPlanRange(p, 1_000, 1_010, PLAN_RECORD_BYTES)).rejects.toThrow(/shorter than expected/);
  });

  it('a plan file cut mid-record is detected', async () => {
    const p = planPath();
    await writePlan(p, 10);
    const { truncateSync } = await import('node:fs');
    truncateSync(p, 9 * PLAN_RECORD_BYTES + 7);
    expect(await readPlanRange(p, 0, 9, PLAN_RECORD_BYTES)).toEqual(Array.from({ length: 9 }, (_, i) => rec(i)));
    await expect(readPlanRange(p, 8, 10, PLAN_RECORD_BYTES)).rejects.toThrow(/shorter than expected/);
  });

  it('a missing plan file rejects', async () => {
    await expect(readPlanRange(join(tmp.path, 'nope.bin'), 0, 1, PLAN_RECORD_BYTES)).rejects.toThrow(/ENOENT/);
  });

  it('PlanWriter.create truncates an existing file', async () => {
    const p = planPath();
    await writePlan(p, 50);
    await writePlan(p, 3);
    expect(statSync(p).size).toBe(3 * PLAN_RECORD_BYTES);
  });
});

describe('a plan of another version', () => {
  it('is refused, not misread: the 32-, 40- and 52-byte records of plans before digests, and a summary without a size', async () => {
    const p = planPath();
    await writePlan(p, 10);
    for (const size of [32, 40, 52, undefined]) {
      const refusal = new RegExp(`this run's plan was written by another version of reverify \\(${size ?? 32}-byte records.*--resume`);
      await expect(readPlanRange(p, 0, 1, size)).rejects.toThrow(refusal);
      await expect(withPlanReader(p, (read) => read(0), size)).rejects.toThrow(refusal);
    }
  });
});
