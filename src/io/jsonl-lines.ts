import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { lineDigest, type LineDigest } from './line-digest.js';

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
  /** With `{ digests: true }`: `lineDigest` of the line's `length` bytes (the plan records it); else 0n. */
  digest: LineDigest;
}

const CHUNK = 1 << 20;

/**
 * Streams a file line by line with byte offsets, in bounded memory (one chunk plus the longest
 * line). Blank lines are yielded too; callers decide what they mean. `digests`: compute each line's
 * digest (the plan records it).
 */
export async function* jsonlLines(path: string, startOffset = 0, opts: { digests?: boolean } = {}): AsyncGenerator<JsonlLine> {
  const digestOf = opts.digests ? lineDigest : () => 0n;
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
          digest: digestOf(data.subarray(start, end)),
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
        digest: digestOf(carry),
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

/**
 * The lines of one read of a file, as byte ranges of `data` (valid until the next iteration):
 * line `k` is `data[start[k], end[k])` (without `\n` and a `\r` before it), its `\n` at
 * `nl[k]` (or `end[k]` for an unterminated last line), numbered `firstLineNo + k`, at file offset
 * `offset + start[k]`.
 */
export interface LineChunk {
  data: Buffer;
  count: number;
  start: Int32Array;
  end: Int32Array;
  nl: Int32Array;
  firstLineNo: number;
  offset: number;
  /** False when the chunk's last line is a file's unterminated last line. */
  lastTerminated: boolean;
}

const BIG_CHUNK = 4 << 20;

/**
 * `jsonlLines` for hot loops: the same lines, a read at a time, as byte ranges (no string, no
 * object per line). Memory: one 4 MiB buffer (grown for a longer line).
 */
export async function* jsonlLineChunks(path: string, startOffset = 0): AsyncGenerator<LineChunk> {
  const fh = await open(path, 'r');
  try {
    let buf = Buffer.allocUnsafe(BIG_CHUNK);
    let used = 0; // bytes of buf holding the carried, unterminated tail
    let bufOffset = startOffset; // file offset of buf[0]
    let position = startOffset;
    let lineNo = 1;
    let cap = 65_536;
    let start = new Int32Array(cap);
    let end = new Int32Array(cap);
    let nl = new Int32Array(cap);
    const chunk: LineChunk = { data: buf, count: 0, start, end, nl, firstLineNo: 1, offset: startOffset, lastTerminated: true };
    for (;;) {
      if (used === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, used);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, used, buf.length - used, position);
      const eof = bytesRead === 0;
      position += bytesRead;
      const filled = used + bytesRead;
      let count = 0;
      let from = 0;
      for (;;) {
        let n = buf.indexOf(10, from);
        if (n < 0 || n >= filled) {
          if (!eof || from >= filled) break;
          n = filled; // the unterminated last line
        }
        if (count === cap) {
          cap *= 2;
          const grow = (a: Int32Array) => {
            const g = new Int32Array(cap);
            g.set(a);
            return g;
          };
          start = grow(start);
          end = grow(end);
          nl = grow(nl);
        }
        start[count] = from;
        end[count] = n < filled && n > from && buf[n - 1] === 13 ? n - 1 : n;
        nl[count] = n;
        count++;
        from = n + 1;
      }
      if (count > 0) {
        chunk.data = buf;
        chunk.count = count;
        chunk.start = start;
        chunk.end = end;
        chunk.nl = nl;
        chunk.firstLineNo = lineNo;
        chunk.offset = bufOffset;
        chunk.lastTerminated = !(eof && nl[count - 1] === filled);
        yield chunk;
        lineNo += count;
      }
      if (eof) break;
      // Keep the unterminated tail at the front of the buffer.
      const tail = Math.min(from, filled);
      buf.copy(buf, 0, tail, filled);
      used = filled - tail;
      bufOffset += tail;
    }
  } finally {
    await fh.close();
  }
}

/** Line `k` of a chunk as `jsonlLines` yields it (for the rare line a hot loop handles in full). */
export function chunkLine(chunk: LineChunk, k: number, digests: boolean): JsonlLine {
  const { data } = chunk;
  const start = chunk.start[k];
  const end = chunk.end[k];
  const bytes = data.subarray(start, end);
  const terminated = k < chunk.count - 1 || chunk.lastTerminated;
  return {
    text: data.toString('utf8', start, end),
    lineNo: chunk.firstLineNo + k,
    offset: chunk.offset + start,
    length: end - start,
    rawLength: chunk.nl[k] - start,
    terminated,
    utf8: isUtf8(bytes),
    digest: digests ? lineDigest(bytes) : 0n,
  };
}
