/**
 * Run files of the external sort (external-sort.ts): records sorted in memory are written as a run,
 * a file of frames (each record's length as a u32, then its bytes), and read back in order a
 * buffer at a time for the merge (run-merge.ts).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { writeFully } from './write-fully.js';

/** How a record is written to and read from a run file. */
export interface RecordCodec<T> {
  /** Bytes `write` will use for `t`. */
  size(t: T): number;
  /**
   * Optional, for hot sorts: an upper bound of `size(t)` that is cheap to compute. With it the run
   * writer sizes nothing exactly (when the bound fits its buffer), and `write` must return where
   * the record ends.
   */
  maxSize?(t: T): number;
  write(t: T, buf: Buffer, at: number): void | number;
  /** Reads the record in `buf[at, at + length)`. */
  read(buf: Buffer, at: number, length: number): T;
}

const IO_BUFFER_BYTES = 1 << 20;
/**
 * What the readers of one merge hold in all: each gets an equal share, between these bounds. With a
 * buffer of 1 MiB each, the plan of 10^7 rows held 64 MiB of them (10 at 10^6 rows), and its worker
 * stayed that much bigger for the rest of the run.
 */
export const MERGE_READ_BYTES = 16 << 20;
const MIN_READ_BYTES = 64 << 10;

/** The read buffer of each of `runs` readers merged together. */
export function readBufferBytes(runs: number): number {
  return Math.max(MIN_READ_BYTES, Math.min(IO_BUFFER_BYTES, Math.floor(MERGE_READ_BYTES / Math.max(1, runs))));
}
/** Each record on disk: its length (u32), then its bytes. */
export const FRAME_HEADER = 4;

/** Writes frames to a file through a buffer. */
class FrameWriter<T> {
  private buf = Buffer.allocUnsafe(IO_BUFFER_BYTES);
  private used = 0;

  constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
    private readonly codec: RecordCodec<T>,
  ) {}

  /** Buffers `t`; returns a promise only when the buffer had to be written first (await it). */
  add(t: T): Promise<void> | undefined {
    const max = this.codec.maxSize?.(t);
    if (max !== undefined && this.used + FRAME_HEADER + max <= this.buf.length) {
      const end = this.codec.write(t, this.buf, this.used + FRAME_HEADER) as number;
      this.buf.writeUInt32LE(end - this.used - FRAME_HEADER, this.used);
      this.used = end;
      return undefined;
    }
    const n = this.codec.size(t);
    if (this.used + FRAME_HEADER + n > this.buf.length) return this.flushThenAdd(t, n);
    this.put(t, n);
    return undefined;
  }

  private async flushThenAdd(t: T, n: number): Promise<void> {
    await this.flush();
    if (FRAME_HEADER + n > this.buf.length) this.buf = Buffer.allocUnsafe(FRAME_HEADER + n);
    this.put(t, n);
  }

  private put(t: T, n: number): void {
    this.buf.writeUInt32LE(n, this.used);
    this.codec.write(t, this.buf, this.used + FRAME_HEADER);
    this.used += FRAME_HEADER + n;
  }

  async flush(): Promise<void> {
    await writeFully(this.fh, this.buf.subarray(0, this.used), null, this.path);
    this.used = 0;
  }
}

/** Writes records (already in order, in arrays) as the run file `path`. */
export async function writeRun<T>(
  path: string,
  codec: RecordCodec<T>,
  chunks: Iterable<readonly T[]> | AsyncIterable<readonly T[]>,
): Promise<void> {
  const fh = await open(path, 'w');
  try {
    const w = new FrameWriter(fh, path, codec);
    for await (const chunk of chunks) {
      for (const t of chunk) {
        const writing = w.add(t);
        if (writing) await writing;
      }
    }
    await w.flush();
  } finally {
    await fh.close();
  }
}

/** Reads frames of a run file in order, a buffer at a time. */
export class FrameReader<T> {
  private buf: Buffer;
  private start = 0;
  private end = 0;
  private position = 0;
  head: T | undefined;

  private constructor(
    private readonly fh: FileHandle,
    private readonly codec: RecordCodec<T>,
    bufferBytes: number,
  ) {
    this.buf = Buffer.allocUnsafe(bufferBytes);
  }

  /** A reader of `path` through a buffer of `bufferBytes` (grown for a larger record). */
  static async open<T>(path: string, codec: RecordCodec<T>, bufferBytes = IO_BUFFER_BYTES): Promise<FrameReader<T>> {
    const r = new FrameReader(await open(path, 'r'), codec, bufferBytes);
    await r.advance();
    return r;
  }

  /**
   * Moves `head` to the next record (`undefined` at the end). Without I/O when the next record is
   * in the buffer (returns undefined), else returns the promise of the read (await it).
   */
  advance(): Promise<void> | undefined {
    if (!this.hasFrame()) return this.advanceSlow();
    this.take();
    return undefined;
  }

  private take(): void {
    const n = this.buf.readUInt32LE(this.start);
    this.head = this.codec.read(this.buf, this.start + FRAME_HEADER, n);
    this.start += FRAME_HEADER + n;
  }

  private async advanceSlow(): Promise<void> {
    while (!this.hasFrame()) {
      if (!(await this.fill())) {
        if (this.end === this.start) {
          this.head = undefined;
          return;
        }
        throw new Error('run file ends mid-record (it was changed or cut while being read)');
      }
    }
    this.take();
  }

  private hasFrame(): boolean {
    return this.has(FRAME_HEADER) && this.has(FRAME_HEADER + this.buf.readUInt32LE(this.start));
  }

  private has(n: number): boolean {
    return this.end - this.start >= n;
  }

  /**
   * Moves the unread bytes to the front and reads more, growing the buffer for a record larger
   * than it. Returns false at the end of the file.
   */
  private async fill(): Promise<boolean> {
    const left = this.end - this.start;
    const need = left >= FRAME_HEADER ? FRAME_HEADER + this.buf.readUInt32LE(this.start) : 0;
    const next = need > this.buf.length ? Buffer.allocUnsafe(need) : this.buf;
    this.buf.copy(next, 0, this.start, this.end);
    this.buf = next;
    this.start = 0;
    this.end = left;
    let read = 0;
    while (this.end < this.buf.length) {
      const { bytesRead } = await this.fh.read(this.buf, this.end, this.buf.length - this.end, this.position);
      if (bytesRead === 0) break;
      this.end += bytesRead;
      this.position += bytesRead;
      read += bytesRead;
    }
    return read > 0;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}
