/**
 * Damage done to a JSONL input file by the property test of damaged inputs
 * (test/integration/damaged-inputs.property.test.ts): what it can be, and the damaged bytes.
 */
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { forgeCrc32 } from './forge-crc32.js';

export type Damage =
  | { kind: 'truncate'; at: number }
  | { kind: 'swap'; a: number; b: number }
  | { kind: 'move'; from: number; to: number }
  | { kind: 'flip'; at: number; byte: number }
  | { kind: 'duplicate'; line: number }
  | { kind: 'invalid-utf8'; at: number }
  | { kind: 'forged-crc'; a: number; b: number };

export const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('swap' as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant('move' as const), from: fc.nat(), to: fc.nat() }),
  fc.record({
    kind: fc.constant('flip' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    byte: fc.integer({ min: 0x20, max: 0x7e }),
  }),
  fc.record({ kind: fc.constant('duplicate' as const), line: fc.nat() }),
  fc.record({ kind: fc.constant('invalid-utf8' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('forged-crc' as const), a: fc.nat(), b: fc.nat() }),
);

/** Trailing padding of every line when the damage is a forged line (JSON whitespace: room to forge a CRC-32 in). */
export const FORGE_PAD = ' '.repeat(48);

/** The damaged bytes of a JSONL file. */
export function damaged(bytes: Buffer, d: Damage): Buffer {
  const lines = bytes.toString('latin1').split('\n').slice(0, -1); // latin1: bytes kept one to one
  const n = lines.length;
  const joined = (ls: string[]) => Buffer.from(ls.join('\n') + '\n', 'latin1');
  const place = (x: number) => Math.min(bytes.length - 1, Math.floor(x * bytes.length));
  switch (d.kind) {
    case 'truncate':
      return bytes.subarray(0, place(d.at));
    case 'swap': {
      const ls = [...lines];
      const [a, b] = [d.a % n, d.b % n];
      [ls[a], ls[b]] = [ls[b], ls[a]];
      return joined(ls);
    }
    case 'move': {
      const ls = [...lines];
      const [line] = ls.splice(d.from % n, 1);
      ls.splice(d.to % n, 0, line);
      return joined(ls);
    }
    case 'flip': {
      const out = Buffer.from(bytes);
      const at = place(d.at);
      if (out[at] !== 10) out[at] = d.byte; // keep the line structure; change the content
      return out;
    }
    case 'duplicate': {
      const ls = [...lines];
      ls.splice(d.line % n, 0, ls[d.line % n]);
      return joined(ls);
    }
    case 'invalid-utf8': {
      const at = place(d.at);
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at)]);
    }
    case 'forged-crc': {
      // Line a becomes line b's row, padded so that its length and CRC-32 are line a's.
      const ls = [...lines];
      const a = d.a % n;
      const b = (d.b % n === a ? a + 1 : d.b) % n;
      const planned = Buffer.from(ls[a], 'latin1');
      ls[a] = forgeCrc32(Buffer.from(ls[b].trimEnd(), 'latin1'), planned.length, crc32(planned)).toString('latin1');
      return joined(ls);
    }
  }
}
