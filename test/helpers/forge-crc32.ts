/**
 * Forges a line of a given length whose CRC-32 is a given value, as a hostile user would to pass a
 * CRC-32 proof: `content` (another key's JSON line, say) followed by JSON whitespace padding, each
 * padding byte a space or a tab. CRC-32 is affine over GF(2) for messages of one length, so turning
 * padding byte i from a space into a tab XORs a fixed 32-bit `delta[i]` into the CRC; choosing which
 * bytes to turn is a 32-unknown linear system, solved here by Gaussian elimination.
 */
import { crc32 } from 'node:zlib';

const SPACE = 0x20;
const TAB = 0x09;

/** `content` padded with spaces and tabs to `length` bytes, with CRC-32 `target`. Needs about 40 bytes of padding. */
export function forgeCrc32(content: Buffer, length: number, target: number): Buffer {
  const pad = length - content.length;
  if (pad < 32) throw new Error(`forgeCrc32: ${pad} bytes of padding, at least 32 are needed`);
  const base = Buffer.concat([content, Buffer.alloc(pad, SPACE)]);
  const c0 = crc32(base);
  // Each row: the delta of one padding byte (bits 0..31) and which bytes it combines (a bit set over positions).
  const rows = Array.from({ length: pad }, (_, i) => {
    const flipped = Buffer.from(base);
    flipped[content.length + i] = TAB;
    const row: Row = { delta: (crc32(flipped) ^ c0) >>> 0, picks: new Set([i]) };
    return row;
  });
  // A basis by highest bit; then the wanted difference is reduced to nothing by it, collecting the picks.
  const basis = new Array<Row | undefined>(32);
  for (const row of rows) {
    while (row.delta !== 0) {
      const h = highBit(row.delta);
      const b = basis[h];
      if (b === undefined) {
        basis[h] = row;
        break;
      }
      xorInto(row, b);
    }
  }
  const want: Row = { delta: (c0 ^ target) >>> 0, picks: new Set<number>() };
  while (want.delta !== 0) {
    const b = basis[highBit(want.delta)];
    if (b === undefined) throw new Error('forgeCrc32: the padding cannot reach this CRC-32; give more padding');
    xorInto(want, b);
  }
  const out = Buffer.from(base);
  for (const i of want.picks) out[content.length + i] = TAB;
  if (crc32(out) !== target) throw new Error('forgeCrc32: internal error');
  return out;
}

function highBit(x: number): number {
  return 31 - Math.clz32(x);
}

interface Row {
  delta: number;
  picks: Set<number>;
}

function xorInto(into: Row, from: Row): void {
  into.delta = (into.delta ^ from.delta) >>> 0;
  for (const i of from.picks) if (!into.picks.delete(i)) into.picks.add(i);
}
