/**
 * Files of row places: one fixed 16-byte record per row (which file, byte offset, length), written
 * in the order rows are to be read back. A group's rows, sorted by key, wait here until its
 * `/aggregate_metrics` body is streamed, so memory holds one buffer per open file, not the places.
 */
import { open } from 'node:fs/promises';
import { RecordFileWriter, type EncodeRecord } from '../io/record-file-writer.js';

/** Where one row sits: file number `file`, bytes `[offset, offset + length)`. */
export interface Place {
  file: number;
  offset: number;
  length: number;
}

const PLACE_BYTES = 16;
const BUFFER_PLACES = 4096;

/** Writes place `p`'s record at `buf[at]`. */
const putPlace: EncodeRecord<Place> = (p, buf, at) => {
  buf.writeDoubleLE(p.offset, at);
  buf.writeUInt32LE(p.file, at + 8);
  buf.writeUInt32LE(p.length, at + 12);
};

/** Appends places to a new file through a buffer. */
export class PlaceFileWriter {
  private constructor(private readonly out: RecordFileWriter) {}

  static async create(path: string): Promise<PlaceFileWriter> {
    return new PlaceFileWriter(await RecordFileWriter.create(path, PLACE_BYTES, BUFFER_PLACES));
  }

  /** Places written. */
  get count(): number {
    return this.out.count;
  }

  async add(p: Place): Promise<void> {
    await this.out.add(p, putPlace);
  }

  /** Flushes and closes (no fsync: the file is scratch, read back by this process). */
  close(): Promise<void> {
    return this.out.close(false);
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
