import { existsSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { writeFully } from '../../src/io/write-fully.js';
import type { Checkpoint, Counts } from './checkpoint.js';

/** A result waiting to be written: its line (if any) and how it counts. */
interface PendingRow {
  row: number;
  target: 'main' | 'sidecar' | null;
  line: Buffer | null;
  count: (c: Counts, cp: Checkpoint) => void;
  written: () => void;
  failed: (err: unknown) => void;
}

/**
 * The batch's two partial files plus its checkpoint. Rows are recorded in groups: whatever finished
 * while the previous write was under way is written with one write per file, then counted and
 * marked done — so a checkpoint taken at any moment covers exactly the rows whose lines lie within
 * its recorded lengths, and a retry never repeats or loses one.
 */
export class BatchRecorder {
  private pending: PendingRow[] = [];
  private writing: Promise<void> | null = null;
  private constructor(
    private readonly main: FileHandle,
    private readonly sidecar: FileHandle,
    private readonly paths: { main: string; sidecar: string },
    readonly checkpoint: Checkpoint,
  ) {}

  static async open(mainPath: string, sidecarPath: string, checkpoint: Checkpoint): Promise<BatchRecorder> {
    const openAt = async (path: string, keep: number) => {
      const fh = await open(path, existsSync(path) ? 'r+' : 'w+');
      await fh.truncate(keep);
      return fh;
    };
    const main = await openAt(mainPath, checkpoint.mainBytes);
    const sidecar = await openAt(sidecarPath, checkpoint.sidecarBytes);
    return new BatchRecorder(main, sidecar, { main: mainPath, sidecar: sidecarPath }, checkpoint);
  }

  /** Writes `line` to the main output or the sidecar (or nowhere), then applies `count`. */
  record(row: number, target: 'main' | 'sidecar' | null, line: string | null, count: (c: Counts, cp: Checkpoint) => void): Promise<void> {
    return new Promise((written, failed) => {
      this.pending.push({ row, target, line: line === null ? null : Buffer.from(line + '\n', 'utf8'), count, written, failed });
      this.writing ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending;
      this.pending = [];
      try {
        const cp = this.checkpoint;
        const main = Buffer.concat(group.filter((p) => p.target === 'main' && p.line).map((p) => p.line!));
        const side = Buffer.concat(group.filter((p) => p.target === 'sidecar' && p.line).map((p) => p.line!));
        await Promise.all([
          writeFully(this.main, main, cp.mainBytes, this.paths.main),
          writeFully(this.sidecar, side, cp.sidecarBytes, this.paths.sidecar),
        ]);
        cp.mainBytes += main.length;
        cp.sidecarBytes += side.length;
        for (const p of group) {
          p.count(cp.counts, cp);
          cp.done.push(p.row);
        }
        group.forEach((p) => p.written());
      } catch (err) {
        group.forEach((p) => p.failed(err));
      }
    }
    this.writing = null;
  }

  /** A copy of the checkpoint, consistent at this instant. */
  snapshot(): Checkpoint {
    const cp = this.checkpoint;
    return {
      ...cp,
      done: [...cp.done],
      judgeFailedRows: [...cp.judgeFailedRows],
      counts: structuredClone(cp.counts),
      strikes: { ...cp.strikes },
      audit: cp.audit && structuredClone(cp.audit),
    };
  }

  async close(): Promise<void> {
    await this.writing;
    await Promise.all([this.main.sync(), this.sidecar.sync()]);
    await Promise.all([this.main.close(), this.sidecar.close()]);
  }
}
