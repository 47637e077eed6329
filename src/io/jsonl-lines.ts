import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';

/** One line of a JSONL file, with where it sits in the file. */
export interface JsonlLine {
  /** The line's text without its `\n` (and without a `\r` before it). */
  text: string;
  /** 1-based line number, for `file:line` messages. */
  lineNo: number;
  /** Byte offset of the first byte of the line. */
  offset: number;
  /** Byte length of the line without its terminator (`\n` or `\r\n`): the bytes of `text`. */
  length: number;
  /** Byte length up to the `\n`, a `\r` before it included: what a verbatim copy copies. */
  rawLength: number;
  /** False for a last line that has no `\n` (a file that ends mid-line). */
  terminated: boolean;
  /** False when the line's bytes are not valid UTF-8 (`text` then holds U+FFFD replacements). */
  utf8: boolean;
  /** With `{ sums: true }`: CRC-32 of the line's `length` bytes (see `lineSum`); else 0. */
  sum: number;
}

/** The checksum a plan records of a row's bytes, to prove later reads (CRC-32, as zlib computes it). */
export function lineSum(bytes: Uint8Array): number {
  return crc32(bytes);
}

const CHUNK = 1 << 20;

/**
 * Streams a file line by line with byte offsets, in bounded memory (one chunk plus the longest
 * line). Blank lines are yielded too; callers decide what they mean. `sums`: compute each line's
 * checksum (the plan records it).
 */
export async function* jsonlLines(path: string, startOffset = 0, opts: { sums?: boolean } = {}): AsyncGenerator<JsonlLine> {
  const sumOf = opts.sums ? lineSum : () => 0;
  const fh = await open(path, 'r');
  try {
    let carry: Buffer = Buffer.alloc(0);
    let carryOffset = startOffset;
    let position = startOffset;
    let lineNo = 0;
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const data: Buffer = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
      let start = 0;
      for (;;) {
        const nl = data.indexOf(10, start);
        if (nl < 0) break;
        lineNo++;
        const end = nl > start && data[nl - 1] === 13 ? nl - 1 : nl;
        yield {
          text: data.toString('utf8', start, end),
          lineNo,
          offset: carryOffset + start,
          length: end - start,
          rawLength: nl - start,
          terminated: true,
          utf8: isUtf8(data.subarray(start, end)),
          sum: sumOf(data.subarray(start, end)),
        };
        start = nl + 1;
      }
      // Keep the unterminated tail; copy it, since `buf` is reused by the next read.
      carry = Buffer.from(data.subarray(start));
      carryOffset += start;
    }
    if (carry.length > 0) {
      lineNo++;
      yield {
        text: carry.toString('utf8'),
        lineNo,
        offset: carryOffset,
        length: carry.length,
        rawLength: carry.length,
        terminated: false,
        utf8: isUtf8(carry),
        sum: sumOf(carry),
      };
    }
  } finally {
    await fh.close();
  }
}

/** True for an empty or whitespace-only line. */
export function isBlank(text: string): boolean {
  return text.trim().length === 0;
}
