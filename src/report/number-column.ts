/** A growing column of numbers in one Float64Array: 8 bytes a value, none boxed (the join's paired rewards). */
export class NumberColumn {
  // Small at first: a join holds two per agent, and a file may name many agents.
  private buf = new Float64Array(16);
  length = 0;

  push(v: number): void {
    if (this.length === this.buf.length) {
      const bigger = new Float64Array(2 * this.buf.length);
      bigger.set(this.buf);
      this.buf = bigger;
    }
    this.buf[this.length++] = v;
  }

  /** The values pushed, in order (a view: valid until the next push). */
  values(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}
