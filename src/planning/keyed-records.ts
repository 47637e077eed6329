/**
 * The records the key joins sort (plan, seeding, re-judgment, aggregation): a row key's canonical
 * id, a fixed tuple of numbers (what the record is and where its row sits) and an optional text
 * (a message). Sorted by key id, then the numbers in order, so `[kind, seq, ...]` puts a key's
 * records together, by kind, then in file order.
 */
import type { RecordCodec } from '../io/external-sort.js';

export interface KeyedRecord {
  key: string;
  nums: number[];
  text: string | null;
}

const NO_TEXT = 0xffffffff;

export const keyedRecordCodec: RecordCodec<KeyedRecord> = {
  size: (r) => 4 + Buffer.byteLength(r.key) + 1 + 8 * r.nums.length + 4 + (r.text === null ? 0 : Buffer.byteLength(r.text)),
  write(r, buf, at) {
    const k = buf.write(r.key, at + 4);
    buf.writeUInt32LE(k, at);
    let p = at + 4 + k;
    buf[p++] = r.nums.length;
    for (const n of r.nums) {
      buf.writeDoubleLE(n, p);
      p += 8;
    }
    if (r.text === null) {
      buf.writeUInt32LE(NO_TEXT, p);
    } else {
      const t = buf.write(r.text, p + 4);
      buf.writeUInt32LE(t, p);
    }
  },
  read(buf, at) {
    const k = buf.readUInt32LE(at);
    const key = buf.toString('utf8', at + 4, at + 4 + k);
    let p = at + 4 + k;
    const count = buf[p++];
    const nums = new Array<number>(count);
    for (let i = 0; i < count; i++, p += 8) nums[i] = buf.readDoubleLE(p);
    const t = buf.readUInt32LE(p);
    const text = t === NO_TEXT ? null : buf.toString('utf8', p + 4, p + 4 + t);
    return { key, nums, text };
  },
};

/** By key id (any fixed total order does: only equality groups), then the numbers in order. */
export function compareKeyedRecords(a: KeyedRecord, b: KeyedRecord): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  const n = Math.min(a.nums.length, b.nums.length);
  for (let i = 0; i < n; i++) if (a.nums[i] !== b.nums[i]) return a.nums[i] - b.nums[i];
  return a.nums.length - b.nums.length;
}
