/**
 * Rows read back by place (file, byte offset, length), a batch at a time: how aggregation and
 * `reverify aggregate`'s merge read rows sorted by key without holding them.
 */
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Place } from './place-file.js';

/** Rows read per batch at most. */
export const READ_BATCH_ROWS = 256;
/** Bytes read per batch at most (a batch always holds at least one row). */
const READ_BATCH_BYTES = 8 << 20;

/**
 * Splits a stream of places into read batches, in order: each at most `READ_BATCH_ROWS` rows and
 * `maxBytes` bytes, and at least one row (a row larger than `maxBytes` is a batch of its own).
 */
export async function* readBatches<P extends Place>(places: AsyncIterable<P>, maxBytes = READ_BATCH_BYTES): AsyncGenerator<P[]> {
  let batch: P[] = [];
  let bytes = 0;
  for await (const p of places) {
    if (batch.length > 0 && (batch.length === READ_BATCH_ROWS || bytes + p.length > maxBytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(p);
    bytes += p.length;
  }
  if (batch.length > 0) yield batch;
}

function readExact(fh: FileHandle, path: string, place: Place, buf: Buffer, at: number): void {
  let done = 0;
  while (done < place.length) {
    const n = readSync(fh.fd, buf, at + done, place.length - done, place.offset + done);
    if (n === 0) {
      throw new Error(`unexpected end of file at byte ${place.offset + done} of ${path} (the file changed while it was being read)`);
    }
    done += n;
  }
}

/**
 * Reads rows by place from a set of files, a batch of rows at a time (see `readBatches`). Rows in
 * key order are scattered over the files, so this is one positioned read per row; they are
 * SYNCHRONOUS reads: from the page cache a `readSync` takes a few µs where an async
 * `FileHandle.read` round trip through libuv's thread pool takes 25–125 µs, which made reading
 * dominate aggregation. A batch (at most `READ_BATCH_ROWS` rows / 8 MiB) blocks the event loop for
 * about a millisecond when cached; callers await between batches. Keeps at most `maxOpen` files
 * open (least recently used closed first), so thousands of shards do not exhaust file descriptors.
 */
export class RowReader {
  private readonly handles = new Map<number, FileHandle>();

  constructor(
    private readonly files: readonly string[],
    private readonly maxOpen = 64,
  ) {}

  private async handle(file: number): Promise<FileHandle> {
    let fh = this.handles.get(file);
    if (fh) {
      this.handles.delete(file);
    } else {
      fh = await open(this.files[file], 'r');
    }
    this.handles.set(file, fh);
    return fh;
  }

  private async trim(): Promise<void> {
    while (this.handles.size > this.maxOpen) {
      const [oldest, fh] = this.handles.entries().next().value as [number, FileHandle];
      this.handles.delete(oldest);
      await fh.close();
    }
  }

  /** Reads `places` (a batch, see `readBatches`) into `buf` at `at[i]` (room for each row's bytes). */
  async bytesInto(places: readonly Place[], buf: Buffer, at: readonly number[]): Promise<void> {
    for (let i = 0; i < places.length; i++) {
      const p = places[i];
      readExact(await this.handle(p.file), this.files[p.file], p, buf, at[i]);
      await this.trim();
    }
  }

  /** The rows' texts (UTF-8), in order. */
  async texts(places: readonly Place[]): Promise<string[]> {
    const at: number[] = [];
    let total = 0;
    for (const p of places) {
      at.push(total);
      total += p.length;
    }
    const buf = Buffer.allocUnsafe(total);
    await this.bytesInto(places, buf, at);
    return places.map((p, i) => buf.toString('utf8', at[i], at[i] + p.length));
  }

  /** One row's text (UTF-8). */
  async text(place: Place): Promise<string> {
    return (await this.texts([place]))[0];
  }

  /** Closes every open file. */
  async close(): Promise<void> {
    const open = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(open.map((fh) => fh.close()));
  }
}
