/**
 * Reads the rows a run commits to its failures sidecar, as they are committed, for the lines NeMo
 * Gym prints for each rollout dropped from the score and for the end's count of the failure classes
 * routed by this run. A viewer only: a sidecar this process cannot read (a run on other machines)
 * just gives no lines.
 */
import { open } from 'node:fs/promises';
import { droppedFromScore } from '../contract/dropped-row.js';

const CHUNK = 1 << 20;

export class SidecarWatch {
  private offset: number;
  private carry: Buffer = Buffer.alloc(0);
  private readable = true;
  /** Rows of this run per failure class. */
  readonly routed = new Map<string, number>();

  /**
   * @param from the sidecar's length when the run opened it (rows past it are this run's)
   * @param printFrom rows that start before this offset are counted but not printed (already shown
   *   by the terminal that started the run, when this one attached later)
   */
  constructor(
    readonly path: string,
    from: number,
    private readonly printFrom = from,
  ) {
    this.offset = from;
  }

  /** The lines for the rows committed up to `upTo` (default: the end of the file) since the last call. */
  async take(upTo?: number): Promise<string[]> {
    if (!this.readable) return [];
    const lines: string[] = [];
    try {
      const fh = await open(this.path, 'r');
      try {
        const end = upTo ?? (await fh.stat()).size;
        const buf = Buffer.allocUnsafe(CHUNK);
        let read = this.offset + this.carry.length;
        while (read < end) {
          const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, end - read), read);
          if (bytesRead === 0) break;
          read += bytesRead;
          this.split(Buffer.concat([this.carry, buf.subarray(0, bytesRead)]), lines);
        }
      } finally {
        await fh.close();
      }
    } catch {
      this.readable = false;
    }
    return lines;
  }

  /** Takes the complete lines of `data` (which starts at `this.offset`); keeps the rest for later. */
  private split(data: Buffer, lines: string[]): void {
    let start = 0;
    for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, start)) {
      const text = data.toString('utf8', start, nl);
      const rowOffset = this.offset + start;
      start = nl + 1;
      if (text.trim() === '') continue;
      const dropped = droppedFromScore(text);
      if (dropped === null) continue;
      this.routed.set(dropped.failureClass, (this.routed.get(dropped.failureClass) ?? 0) + 1);
      if (rowOffset >= this.printFrom) lines.push(dropped.line);
    }
    this.offset += start;
    this.carry = Buffer.from(data.subarray(start));
  }
}
