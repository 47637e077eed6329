import { existsSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { writeFully } from '../../src/io/write-fully.js';
import type { Checkpoint, Counts } from './checkpoint.js';

/** A result waiting to be written: its line (if any) and how it counts. */
interface PendingRow {
  row: number;
  target: 'main' | 'sidecar' | null;
  line: string | null;
  count: (c: Counts, cp: Checkpoint) => void;
}

/**
 * The batch's two partial files plus its checkpoint. Rows are recorded in groups: whatever finished
 * within GROUP_MS (or up to GROUP_CHARS of lines) is written with one write per file, then counted
 * and marked done — so a checkpoint taken at any moment covers exactly the rows whose lines lie within
 * its recorded lengths, and a retry never repeats or loses one.
 *
 * `record` does not wait for the disk: a lane goes on to its next row while the group is written
 * (a lane that waited for every write kept a `/verify` slot idle for that long). A failed write is
 * thrown by the next `record` and by `flush`/`close`; `flush` waits until every row recorded so far
 * is written and counted.
 */
export class BatchRecorder {
  private pending: PendingRow[] = [];
  /** Characters of the pending lines (about their bytes). */
  private pendingChars = 0;
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failure: { error: unknown } | null = null;
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
    // Both at once (the batch's first rows are being read meanwhile); neither is left open if the other fails.
    const [main, sidecar] = await Promise.allSettled([
      openAt(mainPath, checkpoint.mainBytes),
      openAt(sidecarPath, checkpoint.sidecarBytes),
    ]);
    if (main.status === 'fulfilled' && sidecar.status === 'fulfilled')
      return new BatchRecorder(main.value, sidecar.value, { main: mainPath, sidecar: sidecarPath }, checkpoint);
    for (const opened of [main, sidecar]) if (opened.status === 'fulfilled') await opened.value.close();
    throw main.status === 'rejected' ? main.reason : (sidecar as PromiseRejectedResult).reason;
  }

  /**
   * Queues `line` for the main output or the sidecar (or nowhere); once it is written, `count` is
   * applied and the row marked done. Throws the error of a write that failed before.
   */
  record(row: number, target: 'main' | 'sidecar' | null, line: string | null, count: (c: Counts, cp: Checkpoint) => void): void {
    if (this.failure) throw this.failure.error;
    this.pending.push({ row, target, line, count });
    if (line !== null) this.pendingChars += line.length;
    if (this.writing) return;
    if (this.pendingChars >= GROUP_CHARS) this.startDrain();
    else this.timer ??= setTimeout(() => this.startDrain(), GROUP_MS);
  }

  /** Waits until every row recorded so far is written and counted; throws a failed write's error. */
  async flush(): Promise<void> {
    if (this.writing === null && this.pending.length > 0) this.startDrain();
    while (this.writing !== null) {
      await this.writing;
      if (this.writing === null && this.pending.length > 0 && !this.failure) this.startDrain();
    }
    if (this.failure) throw this.failure.error;
  }

  private startDrain(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.writing !== null) return;
    // `writing` is cleared only once the drain has ended, never before it is set: a drain with
    // nothing to do (a write failed before) ends at once, and `flush` would wait on it forever.
    this.writing = this.drain().then(() => {
      this.writing = null;
      if (this.pending.length > 0 && !this.failure) this.timer ??= setTimeout(() => this.startDrain(), GROUP_MS);
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0 && !this.failure) {
      const group = this.pending;
      this.pending = [];
      this.pendingChars = 0;
      try {
        const cp = this.checkpoint;
        const main = encodeLines(group, 'main');
        const side = encodeLines(group, 'sidecar');
        if (main.length > 0 && side.length > 0)
          await Promise.all([
            writeFully(this.main, main, cp.mainBytes, this.paths.main),
            writeFully(this.sidecar, side, cp.sidecarBytes, this.paths.sidecar),
          ]);
        else if (main.length > 0) await writeFully(this.main, main, cp.mainBytes, this.paths.main);
        else if (side.length > 0) await writeFully(this.sidecar, side, cp.sidecarBytes, this.paths.sidecar);
        cp.mainBytes += main.length;
        cp.sidecarBytes += side.length;
        for (const p of group) {
          p.count(cp.counts, cp);
          cp.done.push(p.row);
        }
      } catch (err) {
        this.failure = { error: err };
      }
      // Rows that came during the write wait for more unless they fill a group already.
      if (this.pendingChars < GROUP_CHARS) break;
    }
  }

  /** A copy of the checkpoint, consistent at this instant. */
  snapshot(): Checkpoint {
    const cp = this.checkpoint;
    return {
      ...cp,
      done: [...cp.done],
      judgeFailedRows: [...cp.judgeFailedRows],
      ...(cp.withdrawnRows ? { withdrawnRows: [...cp.withdrawnRows] } : {}),
      ...(cp.terminalRows ? { terminalRows: [...cp.terminalRows] } : {}),
      counts: structuredClone(cp.counts),
      strikes: { ...cp.strikes },
      audit: cp.audit && structuredClone(cp.audit),
      ...(cp.paired ? { paired: { ...cp.paired } } : {}),
    };
  }

  /** Writes what is left, syncs and closes both files (a failed write is thrown by `record`/`flush`). */
  async close(): Promise<void> {
    try {
      await this.flush().catch(() => undefined);
      await Promise.all([this.main.sync(), this.sidecar.sync()]);
    } finally {
      await Promise.all([this.main.close(), this.sidecar.close()]);
    }
  }
}

/** A group is written when its lines reach this many characters, or GROUP_MS after its first row. */
const GROUP_CHARS = 512 * 1024;
const GROUP_MS = 20;

const EMPTY = Buffer.alloc(0);

/** The group's lines bound for `target`, each ended by a newline, encoded once. */
function encodeLines(group: PendingRow[], target: 'main' | 'sidecar'): Buffer {
  let text = '';
  for (const p of group) if (p.target === target && p.line !== null) text += p.line + '\n';
  return text === '' ? EMPTY : Buffer.from(text, 'utf8');
}
