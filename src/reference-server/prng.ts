/**
 * mulberry32: a small, fast, seeded PRNG of uniform numbers in [0, 1). Equal seeds give equal
 * sequences on every platform (32-bit integer arithmetic only; the state is kept as a signed
 * 32-bit integer, which holds the same bits as the unsigned one and keeps V8 on integer code).
 */
const STEP = 0x6d2b79f5;

/** The number a state gives. */
function output(s: number): number {
  let t = Math.imul(s ^ (s >>> 15), s | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}

/** A generator; `next()` gives the sequence. */
export class Mulberry32 {
  /** In an Int32Array: a plain field would box every state above 2^30 (V8's small integers are 31-bit). */
  private readonly state = new Int32Array(1);

  constructor(seed: number) {
    this.state[0] = seed;
  }

  /** The next number. */
  next(): number {
    const s = (this.state[0] + STEP) | 0;
    this.state[0] = s;
    return output(s);
  }
}

/** `Mulberry32` as a function yielding the next number. */
export function mulberry32(seed: number): () => number {
  const g = new Mulberry32(seed);
  return () => g.next();
}
