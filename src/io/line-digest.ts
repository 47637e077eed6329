/**
 * What a plan records of a row's bytes to prove a later read is the planned row (DESIGN.md "Every
 * read is proven"): the first 64 bits of the SHA-256 of the bytes. A checksum such as CRC-32 can be
 * matched on purpose by altering a few padding bytes; this cannot, at any number of rows a run holds.
 */
import { hash } from 'node:crypto';

/** A line's digest: the first 8 bytes of SHA-256 of its bytes, as an unsigned 64-bit integer. */
export type LineDigest = bigint;

/** Bytes a digest takes in a plan record. */
export const DIGEST_BYTES = 8;

/**
 * A digest's 32-bit halves through one 8-byte scratch, in this machine's byte order: the plan
 * converts 10^7 digests, and bigint shifts and masks (or Buffer's bigint reads and writes) each
 * allocate a bigint; these allocate none, or only the digest read.
 */
const scratch = new BigUint64Array(1);
const halves = new Uint32Array(scratch.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = LITTLE_ENDIAN ? 1 : 0;
const LO = 1 - HI;

export function lineDigest(bytes: Uint8Array): LineDigest {
  const h = hash('sha256', bytes, 'buffer');
  return digestOf(h.readUInt32BE(0), h.readUInt32BE(4));
}

/** The digest whose high and low 32 bits are `hi` and `lo`. */
function digestOf(hi: number, lo: number): LineDigest {
  halves[HI] = hi;
  halves[LO] = lo;
  return scratch[0];
}

/** Writes `d` as 8 bytes, little-endian (as `writeBigUInt64LE`). */
export function writeDigest(d: LineDigest, buf: Buffer, at: number): void {
  scratch[0] = d;
  buf.writeUInt32LE(halves[LO], at);
  buf.writeUInt32LE(halves[HI], at + 4);
}

/** The digest `writeDigest` wrote at `at` (as `readBigUInt64LE`). */
export function readDigest(buf: Buffer, at: number): LineDigest {
  return digestOf(buf.readUInt32LE(at + 4), buf.readUInt32LE(at));
}

/** A digest as two sort numbers (high and low 32 bits): the key joins' records hold only doubles. */
export function digestNums(d: LineDigest): [number, number] {
  return [digestHi(d), digestLo(d)];
}

/** The high 32 bits of a digest, as a sort number (`digestNums`, without the pair). */
export function digestHi(d: LineDigest): number {
  scratch[0] = d;
  return halves[HI];
}

/** The low 32 bits of a digest, as a sort number. */
export function digestLo(d: LineDigest): number {
  scratch[0] = d;
  return halves[LO];
}

/** `lineDigest` of `bytes` as its two sort numbers (`digestNums`), into `out[at]` and `out[at + 1]`: no bigint. */
export function lineDigestHalves(bytes: Uint8Array, out: Uint32Array, at: number): void {
  const h = hash('sha256', bytes, 'buffer');
  out[at] = h.readUInt32BE(0);
  out[at + 1] = h.readUInt32BE(4);
}

/** The digest of the two sort numbers at `n[at]`, `n[at + 1]` (`digestNums`). */
export function digestAt(n: readonly number[], at: number): LineDigest {
  return digestOf(n[at], n[at + 1]);
}
