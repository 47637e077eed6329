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

export function lineDigest(bytes: Uint8Array): LineDigest {
  return hash('sha256', bytes, 'buffer').readBigUInt64BE(0);
}

export function writeDigest(d: LineDigest, buf: Buffer, at: number): void {
  buf.writeBigUInt64LE(d, at);
}

export function readDigest(buf: Buffer, at: number): LineDigest {
  return buf.readBigUInt64LE(at);
}

/** A digest as two sort numbers (high and low 32 bits): the key joins' records hold only doubles. */
export function digestNums(d: LineDigest): [number, number] {
  return [digestHi(d), digestLo(d)];
}

/** The high 32 bits of a digest, as a sort number (`digestNums`, without the pair). */
export function digestHi(d: LineDigest): number {
  return Number(d >> 32n);
}

/** The low 32 bits of a digest, as a sort number. */
export function digestLo(d: LineDigest): number {
  return Number(d & 0xffffffffn);
}

/** The digest of the two sort numbers at `n[at]`, `n[at + 1]` (`digestNums`). */
export function digestAt(n: readonly number[], at: number): LineDigest {
  return (BigInt(n[at]) << 32n) | BigInt(n[at + 1]);
}
