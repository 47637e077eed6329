/**
 * Reads the rows a run commits to its failures sidecar, as they are committed, for the lines NeMo
 * Gym prints for each rollout dropped from the score and for the end's count of the failure classes
 * routed by this run. A run whose judge failures are re-judged in later rounds (`deferred`) prints
 * no line as a row is committed: the watch keeps where each key's last row is, and the end prints
 * the lines of the keys still missing (missing-alarms.ts). A viewer only: a sidecar this process
 * cannot read (a run on other machines) just gives no lines.
 */
import { open } from 'node:fs/promises';
import { droppedFromScore } from '../contract/dropped-row.js';
import { lineKeyId } from '../contract/row-key.js';

const CHUNK = 1 << 20;

export class SidecarWatch {
  private offset: number;
  private carry: Buffer = Buffer.alloc(0);
  private readable = true;
  /** Rows of this run per failure class. */
  readonly routed = new Map<string, number>();
  /** Deferred: the offset of each key's last row of this run (by `lineKeyId`). */
  readonly lastRowOf = new Map<string, number>();

  /**
   * @param from the sidecar's length when the run opened it (rows past it are this run's)
   * @param printFrom rows that start before this offset are counted but not printed (already shown
   *   by the terminal that started the run, when this one attached later)
   * @param deferred later rounds may score these rows: no line now, only `lastRowOf`
   */
  constructor(
    readonly path: string,
    readonly from: number,
    private readonly printFrom = from,
    readonly deferred = false,
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
      if (this.deferred) {
        const key = keyIdOf(text);
        if (key !== null) this.lastRowOf.set(key, rowOffset);
      } else if (rowOffset >= this.printFrom) lines.push(dropped.line);
    }
    this.offset += start;
    this.carry = Buffer.from(data.subarray(start));
  }
}

/** The key id of a row, or null (no key, or not a JSON object). */
export function keyIdOf(text: string): string | null {
  try {
    return lineKeyId(text);
  } catch {
    return null;
  }
}
