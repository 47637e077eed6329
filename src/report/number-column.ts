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

/**
 * `buf`'s first `length` values in an array of their own: a copy when the spare room is worth
 * releasing (a tenth or more), else a view. Columns are handed over once, one after another, so a
 * copy's transient cost is one column.
 */
function trimmed<T extends Numbers>(buf: T, length: number): T {
  return (buf.length - length > buf.length / 10 ? buf.slice(0, length) : buf.subarray(0, length)) as T;
}

/** A growing column of numbers in one Float64Array: 8 bytes a value, none boxed (the join's task places). */
export class NumberColumn {
  // Small at first: a join holds two per agent, and a file may name many agents.
  private buf = new Float64Array(16);
  length = 0;

  push(v: number): void {
    if (this.length === this.buf.length) {
      const bigger = new Float64Array(grown(this.buf.length));
      bigger.set(this.buf);
      this.buf = bigger;
    }
    this.buf[this.length++] = v;
  }

  /** The values pushed, in order, without the column's spare room; the column is left empty. */
  take(): Float64Array {
    const out = trimmed(this.buf, this.length);
    this.buf = new Float64Array(16);
    this.length = 0;
    return out;
  }
}

/** The narrowest of the three kinds that holds `v` exactly: 0 Uint8, 1 Uint32, 2 Float64. */
function kindOf(v: number): 0 | 1 | 2 {
  if (!Number.isInteger(v) || v < 0 || Object.is(v, -0)) return 2;
  return v <= 0xff ? 0 : v <= 0xffffffff ? 1 : 2;
}

const KINDS = [Uint8Array, Uint32Array, Float64Array] as const;

/**
 * A growing column of numbers in the narrowest typed array that holds every value pushed exactly:
 * 1 byte a value while all are integers 0–255 (a judge's 0/1 rewards), 4 while all are integers
 * below 2^32 (task ordinals), else 8. The values read back are the numbers pushed, so every
 * statistic on them is the same; the join's paired rows take 6 bytes each instead of 24.
 */
export class NarrowColumn {
  private kind: 0 | 1 | 2 = 0;
  private buf: Numbers = new Uint8Array(16);
  length = 0;

  push(v: number): void {
    const k = kindOf(v);
    if (k > this.kind || this.length === this.buf.length) this.grow(Math.max(k, this.kind) as 0 | 1 | 2);
    this.buf[this.length++] = v;
  }

  private grow(kind: 0 | 1 | 2): void {
    const capacity = this.length === this.buf.length ? grown(this.buf.length) : this.buf.length;
    const bigger = new KINDS[kind](capacity);
    bigger.set(this.buf.subarray(0, this.length));
    this.buf = bigger;
    this.kind = kind;
  }

  /** The values pushed, in order, without the column's spare room; the column is left empty. */
  take(): Numbers {
    const out = trimmed(this.buf, this.length);
    this.buf = new Uint8Array(16);
    this.kind = 0;
    this.length = 0;
    return out;
  }
}

/** `parts` one after another, in the widest of their kinds (the same numbers). */
export function concatNumbers(parts: readonly Numbers[]): Numbers {
  const kind = Math.max(0, ...parts.map((p) => (p instanceof Float64Array ? 2 : p instanceof Uint32Array ? 1 : 0)));
  const out = new KINDS[kind](parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** 1 where `xs` passes `test`, else 0: one byte a value. */
export function indicators(xs: ArrayLike<number>, test: (x: number) => boolean): Uint8Array {
  const out = new Uint8Array(xs.length);
  for (let i = 0; i < xs.length; i++) out[i] = test(xs[i]) ? 1 : 0;
  return out;
}
