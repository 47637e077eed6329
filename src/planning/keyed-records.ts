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

/**
 * Numbers on disk: an integer of magnitude up to 2^50 (every line, offset, length, id and 32-bit
 * digest half the joins sort) as a varint of 4n (n ≥ 0) or −4n − 2 (n < 0), 1–8 bytes; anything else
 * as the byte 1 and its 8-byte double (an integer's first byte is even). As doubles, the plan's
 * sort runs were 435 bytes a row, a third of 200-byte rows' inputs and rollouts (bench/README.md).
 */
const INT_LIMIT = 2 ** 50;
const isCompact = (n: number) => Number.isInteger(n) && n <= INT_LIMIT && n >= -INT_LIMIT;

function numBytes(n: number): number {
  if (!isCompact(n)) return 9;
  const v = n >= 0 ? n * 4 : -n * 4 - 2;
  if (v < 2 ** 14) return v < 2 ** 7 ? 1 : 2;
  if (v < 2 ** 28) return v < 2 ** 21 ? 3 : 4;
  if (v < 2 ** 42) return v < 2 ** 35 ? 5 : 6;
  return v < 2 ** 49 ? 7 : 8;
}

function writeNum(n: number, buf: Buffer, at: number): number {
  if (!isCompact(n)) {
    buf[at] = 1;
    buf.writeDoubleLE(n, at + 1);
    return at + 9;
  }
  let v = n >= 0 ? n * 4 : -n * 4 - 2;
  let p = at;
  while (v >= 2 ** 31) {
    buf[p++] = (v % 128) + 128;
    v = Math.floor(v / 128);
  }
  // Under 2^31: bit operations are exact.
  while (v >= 128) {
    buf[p++] = (v & 127) | 128;
    v >>>= 7;
  }
  buf[p++] = v;
  return p;
}

/** Where the number `readNum` read last ends (no tuple allocated per number: the merges read 10^8 of them). */
let readEnd = 0;

/** The number at `buf[at]`; `readEnd` is where the next begins. */
function readNum(buf: Buffer, at: number): number {
  let b = buf[at];
  if (b === 1) {
    readEnd = at + 9;
    return buf.readDoubleLE(at + 1);
  }
  let v = b & 127;
  let scale = 128;
  let p = at + 1;
  while (b >= 128) {
    b = buf[p++];
    v += (b & 127) * scale;
    scale *= 128;
  }
  readEnd = p;
  return v % 4 === 0 ? v / 4 : -(v + 2) / 4;
}

export const keyedRecordCodec: RecordCodec<KeyedRecord> = {
  size(r) {
    let n = 4 + Buffer.byteLength(r.key) + 1 + 4 + (r.text === null ? 0 : Buffer.byteLength(r.text));
    for (const x of r.nums) n += numBytes(x);
    return n;
  },
  // UTF-8 takes at most 3 bytes per UTF-16 unit; a number at most 9.
  maxSize: (r) => 9 + 3 * r.key.length + 9 * r.nums.length + (r.text === null ? 0 : 3 * r.text.length),
  write(r, buf, at) {
    const k = buf.write(r.key, at + 4);
    buf.writeUInt32LE(k, at);
    let p = at + 4 + k;
    buf[p++] = r.nums.length;
    for (const n of r.nums) p = writeNum(n, buf, p);
    if (r.text === null) {
      buf.writeUInt32LE(NO_TEXT, p);
      return p + 4;
    }
    const t = buf.write(r.text, p + 4);
    buf.writeUInt32LE(t, p);
    return p + 4 + t;
  },
  read(buf, at) {
    const k = buf.readUInt32LE(at);
    const key = buf.toString('utf8', at + 4, at + 4 + k);
    let p = at + 4 + k;
    const count = buf[p++];
    const nums = new Array<number>(count);
    for (let i = 0; i < count; i++) {
      nums[i] = readNum(buf, p);
      p = readEnd;
    }
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
