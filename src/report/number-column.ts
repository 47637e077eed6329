/** Numbers held in a typed array, none boxed: a column of the verdict join. */
export type Numbers = Uint8Array | Uint32Array | Float64Array;

/**
 * A column's next capacity: half as large again (a column holds at most a third more than its
 * values while it grows; doubling left up to twice as much: 148 MiB of columns for 10^7 rows, where
 * the values took 80).
 */
function grown(capacity: number): number {
  return capacity + Math.max(16, capacity >> 1);
}

/** The narrowest of the three kinds that holds `v` exactly: 0 Uint8, 1 Uint32, 2 Float64. */
function kindOf(v: number): 0 | 1 | 2 {
  if (!Number.isInteger(v) || v < 0 || Object.is(v, -0)) return 2;
  return v <= 0xff ? 0 : v <= 0xffffffff ? 1 : 2;
}

const KINDS = [Uint8Array, Uint32Array, Float64Array] as const;

/**
 * A column's array of `capacity` values of `kind`, on shared memory: a thread reads the column
 * where it is (the report's replay, estimate-history-offthread.ts), where an ArrayBuffer's
 * contents would be copied to it.
 */
function columnArray(kind: 0 | 1 | 2, capacity: number): Numbers {
  const memory = new SharedArrayBuffer(capacity * KINDS[kind].BYTES_PER_ELEMENT);
  return kind === 0 ? new Uint8Array(memory) : kind === 1 ? new Uint32Array(memory) : new Float64Array(memory);
}

/**
 * `buf`'s first `length` values (of `kind`) in an array of their own: a copy when the spare room is
 * worth releasing (a tenth or more), else a view. Columns are handed over once, one after another,
 * so a copy's transient cost is one column.
 */
function trimmed(buf: Numbers, kind: 0 | 1 | 2, length: number): Numbers {
  if (buf.length - length <= buf.length / 10) return buf.subarray(0, length);
  const out = columnArray(kind, length);
  out.set(buf.subarray(0, length));
  return out;
}

/**
 * A growing column of numbers in the narrowest typed array that holds every value pushed exactly:
 * 1 byte a value while all are integers 0–255 (a judge's 0/1 rewards), 4 while all are integers
 * below 2^32 (task ordinals), else 8. The values read back are the numbers pushed, so every
 * statistic on them is the same; the join's paired rows take 6 bytes each instead of 24.
 */
export class NarrowColumn {
  private kind: 0 | 1 | 2 = 0;
  private buf: Numbers;
  length = 0;

  /** `capacity`: the values it is expected to hold (a column sized right grows and copies none). */
  constructor(capacity = 16) {
    this.buf = columnArray(0, capacity);
  }

  push(v: number): void {
    const k = kindOf(v);
    if (k > this.kind || this.length === this.buf.length) this.grow(Math.max(k, this.kind) as 0 | 1 | 2);
    this.buf[this.length++] = v;
  }

  private grow(kind: 0 | 1 | 2): void {
    const capacity = this.length === this.buf.length ? grown(this.buf.length) : this.buf.length;
    const bigger = columnArray(kind, capacity);
    bigger.set(this.buf.subarray(0, this.length));
    this.buf = bigger;
    this.kind = kind;
  }

  /** The values pushed, in order, without the column's spare room; the column is left empty. */
  take(): Numbers {
    const out = trimmed(this.buf, this.kind, this.length);
    this.buf = columnArray(0, 16);
    this.kind = 0;
    this.length = 0;
    return out;
  }
}
