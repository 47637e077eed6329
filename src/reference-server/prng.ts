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
  private state: number;

  constructor(seed: number) {
    this.state = seed | 0;
  }

  /** The next number. */
  next(): number {
    this.state = (this.state + STEP) | 0;
    return output(this.state);
  }
}

/** `Mulberry32` as a function yielding the next number. */
export function mulberry32(seed: number): () => number {
  const g = new Mulberry32(seed);
  return () => g.next();
}
