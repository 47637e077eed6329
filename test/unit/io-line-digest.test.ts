/**
 * Line digests without bigint arithmetic (line-digest.ts): the same values, bytes and halves as
 * SHA-256's first 8 bytes and Buffer's own bigint reads and writes give, at the edges too.
 */
import { hash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ContentDigest } from '../../src/io/content-digest.js';
import {
  digestAt,
  digestHi,
  digestLo,
  digestNums,
  lineDigest,
  lineDigestHalves,
  readDigest,
  writeDigest,
} from '../../src/io/line-digest.js';

const EDGES = [0n, 1n, 0xffffffffn, 0x100000000n, 1n << 63n, (1n << 64n) - 1n, 0x0123456789abcdefn];

describe('line digests', () => {
  it('are the first 8 bytes of SHA-256, big-endian', () => {
    for (const bytes of [Buffer.alloc(0), Buffer.from('{"a":1}'), randomBytes(300)]) {
      expect(lineDigest(bytes)).toBe(hash('sha256', bytes, 'buffer').readBigUInt64BE(0));
      const halves = new Uint32Array(3);
      lineDigestHalves(bytes, halves, 1);
      expect([halves[1], halves[2]]).toEqual(digestNums(lineDigest(bytes)));
    }
  });

  it('are written and read as Buffer writes and reads 64-bit integers, little-endian', () => {
    const digests = [...EDGES, ...Array.from({ length: 200 }, () => randomBytes(8).readBigUInt64BE(0))];
    for (const d of digests) {
      const mine = Buffer.alloc(12, 0xaa);
      const theirs = Buffer.alloc(12, 0xaa);
      writeDigest(d, mine, 3);
      theirs.writeBigUInt64LE(d, 3);
      expect(mine).toEqual(theirs);
      expect(readDigest(theirs, 3)).toBe(d);
      expect(digestNums(d)).toEqual([Number(d >> 32n), Number(d & 0xffffffffn)]);
      expect([digestHi(d), digestLo(d)]).toEqual(digestNums(d));
      expect(digestAt([7, ...digestNums(d)], 1)).toBe(d);
    }
  });

  it("go into a file's content digest the same as bigints or as halves", () => {
    const [whole, halves] = [new ContentDigest(), new ContentDigest()];
    for (let i = 0; i < 20_000; i++) {
      const d = i < EDGES.length ? EDGES[i] : randomBytes(8).readBigUInt64BE(0);
      whole.add(d);
      halves.addHalves(digestHi(d), digestLo(d));
    }
    expect(halves.hex()).toBe(whole.hex());
  });
});
