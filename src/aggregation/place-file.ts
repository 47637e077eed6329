/**
 * Files of row places: one fixed 16-byte record per row (which file, byte offset, length), written
 * in the order rows are to be read back. A group's rows, sorted by key, wait here until its
 * `/aggregate_metrics` body is streamed, so memory holds one buffer per open file, not the places.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { writeFully } from '../io/write-fully.js';

/** Where one row sits: file number `file`, bytes `[offset, offset + length)`. */
export interface Place {
  file: number;
  offset: number;
  length: number;
}

const PLACE_BYTES = 16;
const BUFFER_PLACES = 4096;

/** Appends places to a new file through a buffer. */
export class PlaceFileWriter {
  private readonly buf = Buffer.allocUnsafe(PLACE_BYTES * BUFFER_PLACES);
  private used = 0;
  count = 0;

  private constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
  ) {}

  static async create(path: string): Promise<PlaceFileWriter> {
    return new PlaceFileWriter(await open(path, 'w'), path);
  }

  async add(p: Place): Promise<void> {
    this.buf.writeDoubleLE(p.offset, this.used);
    this.buf.writeUInt32LE(p.file, this.used + 8);
    this.buf.writeUInt32LE(p.length, this.used + 12);
    this.used += PLACE_BYTES;
    this.count++;
    if (this.used === this.buf.length) await this.flush();
  }

  private async flush(): Promise<void> {
    await writeFully(this.fh, this.buf.subarray(0, this.used), null, this.path);
    this.used = 0;
  }

  /** Flushes and closes (no fsync: the file is scratch, read back by this process). */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.fh.close();
    }
  }
}

/** The places of a file written by `PlaceFileWriter`, in order; reads a buffer at a time. */
export async function* readPlaceFile(path: string): AsyncGenerator<Place> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(PLACE_BYTES * BUFFER_PLACES);
    let position = 0;
    for (;;) {
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await fh.read(buf, got, buf.length - got, position + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      if (got % PLACE_BYTES !== 0) throw new Error(`place file ${path} ends mid-record (it was changed while being read)`);
      for (let at = 0; at < got; at += PLACE_BYTES) {
        yield { offset: buf.readDoubleLE(at), file: buf.readUInt32LE(at + 8), length: buf.readUInt32LE(at + 12) };
      }
      if (got < buf.length) return;
      position += got;
    }
  } finally {
    await fh.close();
  }
}
