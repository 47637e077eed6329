/**
 * A JSONL file's lines for readers that want a few top-level members of each row: each line is
 * read as bytes (`jsonlLineChunks`) and checked by the byte scanner (`json-line-scan.ts`); a line
 * it vouches for (a JSON object `JSON.parse` accepts, valid UTF-8) gives its members' raw texts
 * without a string of the whole line. Any other line (blank, malformed, cut off, invalid UTF-8, an
 * escaped top-level key, deep nesting) comes as the `JsonlLine` `jsonlLines` would give, for the
 * reader's full path, which then decides and words its errors exactly as before.
 */
import { isUtf8 } from 'node:buffer';
import { MemberNames, scanJsonObjectLine, SCAN_NO } from '../contract/json-line-scan.js';
import { chunkLine, type JsonlLine, type LineChunk } from './jsonl-lines.js';
import { scannedReads, vouchedAt, type ScannedRead, type ScanOptions } from './scan-ahead.js';

/** Is `b[start, end)` a JSON object the scanner vouches for, as valid UTF-8? Its members' spans are then in `slots`. */
export function isVouchedObject(b: Buffer, start: number, end: number, names: MemberNames, slots: Int32Array): boolean {
  return scanJsonObjectLine(b, start, end, names, slots) !== SCAN_NO && isUtf8(b.subarray(start, end));
}

/**
 * `isVouchedObject` of line `k` of a read, or, when a `ScanAhead` thread scanned that read
 * (`read`), its result for the line (the same spans, copied into `slots`).
 */
export function isVouchedLine(
  b: Buffer,
  start: number,
  end: number,
  names: MemberNames,
  slots: Int32Array,
  read: ScannedRead | null,
  k: number,
): boolean {
  return read ? vouchedAt(read, k, slots) : isVouchedObject(b, start, end, names, slots);
}

/** A cursor on one line of a `jsonlLineChunks` read at a time (`at`), scanned for the names it was made with. */
export class ScannedLine {
  /** The scanner vouched for the line: the wanted members' value spans in `data` are in `slots`. */
  vouched = false;
  /** The bytes of the line's read (valid until the next line). */
  data: Buffer = Buffer.alloc(0);
  readonly slots: Int32Array;
  private chunk: LineChunk | null = null;
  private k = 0;

  constructor(private readonly names: MemberNames) {
    this.slots = names.slots();
  }

  /** Moves to line `k` of `chunk` and scans it (or takes `read`'s scan of it: `scannedReads`). */
  at(chunk: LineChunk, k: number, read: ScannedRead | null = null): void {
    this.chunk = chunk;
    this.k = k;
    this.data = chunk.data;
    this.vouched = isVouchedLine(chunk.data, chunk.start[k], chunk.end[k], this.names, this.slots, read, k);
  }

  /** Raw text of wanted member `i` of a vouched-for line, or `undefined` when it has none. */
  raw(i: number): string | undefined {
    const s = this.slots;
    return s[2 * i] < 0 ? undefined : this.data.toString('utf8', s[2 * i], s[2 * i + 1]);
  }

  /** The line as `jsonlLines` gives it (without its checksum), for the full path. */
  line(): JsonlLine {
    return chunkLine(this.chunk!, this.k, false);
  }
}

/**
 * Calls `visit` with every line of `path` (blank ones too), scanned for `names` (the same cursor
 * each time: read it before returning), and awaits the promise `visit` returns, if any; streams, in
 * bounded memory, with no promise per line otherwise (a big file on two threads: `scannedReads`).
 */
export async function forEachScannedLine(
  path: string,
  names: MemberNames,
  visit: (line: ScannedLine) => Promise<void> | undefined | void,
  opts: Pick<ScanOptions, 'minBytes'> = {},
): Promise<void> {
  const line = new ScannedLine(names);
  for await (const { chunk, read } of scannedReads(path, names.names, opts)) {
    for (let k = 0; k < chunk.count; k++) {
      line.at(chunk, k, read);
      const visiting = visit(line);
      if (visiting) await visiting;
    }
  }
}
