/** Output collected synchronously in a growing buffer, written to a file when asked. */
import type { FileHandle } from 'node:fs/promises';
import { writeFully } from './write-fully.js';

const INITIAL_BYTES = 1 << 20;

export class OutputBuffer {
  private buf = Buffer.allocUnsafe(INITIAL_BYTES);
  private used = 0;

  /** `path`: the file's name in a write error. */
  constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
  ) {}

  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + n));
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  byte(c: number): void {
    if (this.used === this.buf.length) this.room(1);
    this.buf[this.used++] = c;
  }

  bytes(b: Buffer, start: number, end: number): void {
    this.room(end - start);
    this.used += b.copy(this.buf, this.used, start, end);
  }

  text(s: string): void {
    this.room(Buffer.byteLength(s));
    this.used += this.buf.write(s, this.used);
  }

  /** Bytes collected and not written yet. */
  get size(): number {
    return this.used;
  }

  /** Writes what was collected (call it often: memory holds everything until then). */
  async drain(): Promise<void> {
    await writeFully(this.fh, this.buf.subarray(0, this.used), null, this.path);
    this.used = 0;
  }
}
