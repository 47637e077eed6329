/**
 * A new file of fixed-size records, appended through a buffer of whole records (the plan file and
 * its attempts file: planning/plan-file.ts, planning/plan-attempts.ts; aggregation's place files). Each buffer is written whole
 * (`writeFully`: a short write goes on where it stopped), and a disk error of opening, writing or
 * syncing the file names it (`DiskWriteError`).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { writingTo } from './write-errors.js';
import { writeFully } from './write-fully.js';

/** Writes the record of `value` (the writer's `recordBytes` bytes) at `buf[at]`. */
export type EncodeRecord<T> = (value: T, buf: Buffer, at: number) => void;

export class RecordFileWriter {
  private readonly buf: Buffer;
  private used = 0;
  /** Records appended. */
  count = 0;

  /** `path`: the file's name in errors; the buffer holds `bufferRecords` records. */
  constructor(
    private readonly fh: FileHandle,
    readonly path: string,
    readonly recordBytes: number,
    bufferRecords: number,
  ) {
    this.buf = Buffer.alloc(recordBytes * bufferRecords);
  }

  /** A writer of the new (or emptied) file `path`. */
  static async create(path: string, recordBytes: number, bufferRecords: number): Promise<RecordFileWriter> {
    const fh = await writingTo(path, () => open(path, 'w'));
    return new RecordFileWriter(fh, path, recordBytes, bufferRecords);
  }

  /** Appends the record `encode` writes of `value`; returns a promise only when the buffer was written out (await it). */
  add<T>(value: T, encode: EncodeRecord<T>): Promise<void> | undefined {
    encode(value, this.buf, this.used);
    return this.added();
  }

  /** Appends the record at `src[at]` as is; returns a promise only when the buffer was written out (await it). */
  addBytes(src: Buffer, at: number): Promise<void> | undefined {
    src.copy(this.buf, this.used, at, at + this.recordBytes);
    return this.added();
  }

  private added(): Promise<void> | undefined {
    this.used += this.recordBytes;
    this.count++;
    return this.used === this.buf.length ? this.flush() : undefined;
  }

  private async flush(): Promise<void> {
    await writeFully(this.fh, this.buf.subarray(0, this.used), null, this.path);
    this.used = 0;
  }

  /** Flushes, fsyncs (unless `sync` is false: a scratch file read back by this process) and closes (closes also when that fails). */
  async close(sync = true): Promise<void> {
    try {
      await this.flush();
      if (sync) await writingTo(this.path, () => this.fh.sync());
    } finally {
      await this.fh.close();
    }
  }
}
