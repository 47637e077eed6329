/**
 * The records the plan's ordering sort holds (`--order random`, `--dispatch-longest-first`:
 * plan-records-pass.ts): a planned row's rank in the plan's order, its ordinal (file order breaks
 * ties) and its plan record's bytes (with its attempts word after them) as 32-bit words, all in
 * one array of numbers: no object, string or bigint per row, a fixed 8 + 4 × (1 + words) bytes on disk.
 */
import type { RecordCodec } from '../io/external-sort.js';

/** `[rank, ordinal, word 0, word 1, …]`: the words are the plan record's bytes, little-endian. */
export type OrderedPlanRecord = number[];

/** The record of the plan record at `buf[at]`, of `bytes` bytes (a multiple of 4). */
export function orderedPlanRecord(rank: number, ordinal: number, buf: Buffer, at: number, bytes: number): OrderedPlanRecord {
  const r = [rank, ordinal];
  for (let p = at; p < at + bytes; p += 4) r.push(buf.readUInt32LE(p));
  return r;
}

/** Writes the plan record's bytes back to `buf[at]`. */
export function writePlanBytes(r: OrderedPlanRecord, buf: Buffer, at: number): void {
  for (let i = 2; i < r.length; i++) buf.writeUInt32LE(r[i], at + 4 * (i - 2));
}

/** By rank, then ordinal. */
export function compareOrderedPlanRecords(a: OrderedPlanRecord, b: OrderedPlanRecord): number {
  return a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1];
}

export const orderedPlanRecordCodec: RecordCodec<OrderedPlanRecord> = {
  size: (r) => 8 + 4 * (r.length - 1),
  write(r, buf, at) {
    buf.writeDoubleLE(r[0], at);
    for (let i = 1; i < r.length; i++) buf.writeUInt32LE(r[i], at + 4 + 4 * i);
  },
  read(buf, at, length) {
    const r = [buf.readDoubleLE(at)];
    for (let p = at + 8; p < at + length; p += 4) r.push(buf.readUInt32LE(p));
    return r;
  },
};
