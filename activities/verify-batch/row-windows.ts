/**
 * A batch's rows read a window at a time, one window ahead of the lanes, or more while the pool's
 * lanes are about to take its rows (`readRows`: the pool reads ahead as many rows as it has lanes,
 * across its batches): a batch's memory is two windows of rows, or the lanes' next rows and a
 * window, whatever its size, so batches can be large (the fixed cost of each batch, in
 * which its `/verify` slots idle, is then a small part of it) without holding all their rows. A
 * window is at most `WINDOW_ROWS` rows and `WINDOW_BYTES` bytes of rows (at least one row), so
 * long rows (rollouts of 10–50 KB) make shorter windows. Each window is proven as a whole batch's
 * rows were (`readPlannedRows`): a row is never sent unless its bytes are the planned ones, and a
 * changed file stops the batch at the first window that reads it. Both files stay open from the
 * first window to `close()`.
 */
import type { PlanRecord } from '../../src/planning/plan-file.js';
import { PlannedFiles, readPlannedRows, type PlannedRows } from './planned-rows.js';
import type { VerifyBatchRequest } from './request.js';

/** Rows per window at most: two windows are 500 rows, what a batch held before batches grew to 1,000. */
export const WINDOW_ROWS = 250;
/** Bytes of rows (source and input) per window at most: 250 rows of 6 KB. */
export const WINDOW_BYTES = 1_500_000;

/** Limits of a window (defaults: WINDOW_ROWS, WINDOW_BYTES; the first window as large as the others). */
export interface WindowLimits {
  rows?: number;
  bytes?: number;
  /**
   * Rows of the first window at most: the batch's first requests wait for it, so a batch reads only
   * what its lanes send first (its `parallelism`) before they start, and the next window meanwhile.
   */
  firstRows?: number;
}

/** One row of a window: its source (rollout) and input, decoded when asked for. */
export interface PlannedRow {
  source(): string;
  input(): string;
}

export class RowWindows {
  private readonly windows = new Map<number, Promise<PlannedRows>>();
  /** Rows taken from each window still held: a window is dropped once all of its rows are taken. */
  private readonly taken = new Map<number, number>();
  /** Windows read ahead from here on (those before were all taken, or are being read). */
  private ahead = 0;
  /** Where each window starts in `todo`, and, last, `todo.length`. */
  private readonly starts: number[] = [];
  private readonly files: PlannedFiles;

  /**
   * @param todo the batch's rows to send (indices into `records`), taken by `row(k)` for k in
   *   0..todo.length-1, each once, in about increasing order (the lanes claim them so)
   */
  constructor(
    private readonly req: Pick<VerifyBatchRequest, 'plan' | 'inputsPath' | 'outputSidecar'>,
    private readonly records: PlanRecord[],
    private readonly todo: number[],
    limits: WindowLimits = {},
  ) {
    this.files = new PlannedFiles(req.plan, req.outputSidecar);
    const most = { rows: limits.rows ?? WINDOW_ROWS, bytes: limits.bytes ?? WINDOW_BYTES };
    const firstRows = Math.min(most.rows, limits.firstRows ?? most.rows);
    let rows = 0;
    let bytes = 0;
    for (let k = 0; k < todo.length; k++) {
      const rec = records[todo[k]];
      const size = rec.sourceLength + rec.inputLength;
      const cap = this.starts.length === 1 ? firstRows : most.rows;
      if (rows === 0 || rows === cap || bytes + size > most.bytes) {
        this.starts.push(k);
        rows = 0;
        bytes = 0;
      }
      rows++;
      bytes += size;
    }
    this.starts.push(todo.length);
  }

  /** Starts reading the first window (the batch's first requests wait for it), if there is one. */
  readAhead(): void {
    if (this.ahead === 0) {
      this.ahead = 1;
      this.window(0)?.catch(() => undefined); // its failure reaches the lane that takes its first row
    }
  }

  /**
   * Starts reading the windows of rows from..from+rows-1 not asked for yet (the pool's lanes take
   * them next: lane-pool.ts). Windows before `ahead` are being read, held, or all taken: a window
   * is taken only through `row`, which asks for the one after it.
   */
  readRows(from: number, rows: number): void {
    if (rows <= 0 || from < 0 || from >= this.todo.length) return;
    const until = this.windowOf(Math.min(this.todo.length - 1, from + rows - 1));
    for (this.ahead = Math.max(this.ahead, this.windowOf(from)); this.ahead <= until; this.ahead++) {
      this.window(this.ahead)?.catch(() => undefined); // a window read ahead and never used fails nothing
    }
  }

  /** Closes the files (once the reads under way have ended). */
  close(): Promise<void> {
    return this.files.close();
  }

  /** The k-th row to send, once its window is read and proven; the next window is read meanwhile. */
  async row(k: number): Promise<PlannedRow> {
    const w = this.windowOf(k);
    const rows = this.window(w);
    if (rows === undefined) throw new Error(`row ${k} is not one of the batch's ${this.todo.length} rows to send`);
    if (w + 1 >= this.ahead) {
      this.ahead = w + 2;
      this.window(w + 1)?.catch(() => undefined); // a window read ahead and never used fails nothing
    }
    const read = await rows;
    const n = (this.taken.get(w) ?? 0) + 1;
    if (n === this.starts[w + 1] - this.starts[w]) {
      this.windows.delete(w);
      this.taken.delete(w);
    } else this.taken.set(w, n);
    const j = k - this.starts[w];
    return {
      source: () => read.source(j),
      input: () => read.input(j),
    };
  }

  /** Windows being read or held (for tests). */
  held(): number {
    return this.windows.size;
  }

  /** Where each window starts among the rows to send (for tests). */
  windowStarts(): readonly number[] {
    return this.starts.slice(0, -1);
  }

  /** The window holding row k (the last window starting at or before it), or -1 for a k out of range. */
  private windowOf(k: number): number {
    if (k < 0 || k >= this.todo.length) return -1;
    let lo = 0;
    let hi = this.starts.length - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= k) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private window(w: number): Promise<PlannedRows> | undefined {
    let read = this.windows.get(w);
    if (read === undefined && w >= 0 && w < this.starts.length - 1) {
      read = readPlannedRows(this.req, this.records, this.todo.slice(this.starts[w], this.starts[w + 1]), this.files);
      this.windows.set(w, read);
    }
    return read;
  }
}
