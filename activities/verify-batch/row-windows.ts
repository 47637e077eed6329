/**
 * A batch's rows read a window at a time, one window ahead of the lanes: a batch's memory is two
 * windows of rows, whatever its size, so batches can be large (the fixed cost of each batch, in
 * which its `/verify` slots idle, is then a small part of it) without holding all their rows. Each
 * window is proven as a whole batch's rows were (`readPlannedRows`): a row is never sent unless
 * its bytes are the planned ones, and a changed file stops the batch at the first window that
 * reads it.
 */
import type { PlanRecord } from '../../src/planning/plan-file.js';
import { readPlannedRows, type PlannedRows } from './planned-rows.js';
import type { VerifyBatchRequest } from './request.js';

/** Rows per window: two windows are 500 rows, what a batch held before batches grew to 1,000. */
export const WINDOW_ROWS = 250;

/** One row of a window: its source (rollout) and input, as bytes or decoded. */
export interface PlannedRow {
  source(): string;
  input(): string;
  sourceBytes(): Buffer;
  inputBytes(): Buffer;
}

export class RowWindows {
  private readonly windows = new Map<number, Promise<PlannedRows>>();
  /** Rows taken from each window still held: a window is dropped once all of its rows are taken. */
  private readonly taken = new Map<number, number>();
  /** Windows read ahead from here on (those before were all taken, or are being read). */
  private ahead = 0;

  /**
   * @param todo the batch's rows to send (indices into `records`), taken by `row(k)` for k in
   *   0..todo.length-1, each once, in about increasing order (the lanes claim them so)
   */
  constructor(
    private readonly req: Pick<VerifyBatchRequest, 'plan' | 'inputsPath'>,
    private readonly records: PlanRecord[],
    private readonly todo: number[],
    private readonly size = WINDOW_ROWS,
  ) {}

  /** The k-th row to send, once its window is read and proven; the next window is read meanwhile. */
  async row(k: number): Promise<PlannedRow> {
    const w = Math.floor(k / this.size);
    const rows = this.window(w);
    if (w + 1 >= this.ahead) {
      this.ahead = w + 2;
      this.window(w + 1)?.catch(() => undefined); // a window read ahead and never used fails nothing
    }
    if (rows === undefined) throw new Error(`row ${k} is not one of the batch's ${this.todo.length} rows to send`);
    const read = await rows;
    const n = (this.taken.get(w) ?? 0) + 1;
    if (n === Math.min(this.size, this.todo.length - w * this.size)) {
      this.windows.delete(w);
      this.taken.delete(w);
    } else this.taken.set(w, n);
    const j = k - w * this.size;
    return {
      source: () => read.source(j),
      input: () => read.input(j),
      sourceBytes: () => read.sourceBytes(j),
      inputBytes: () => read.inputBytes(j),
    };
  }

  /** Windows being read or held (for tests). */
  held(): number {
    return this.windows.size;
  }

  private window(w: number): Promise<PlannedRows> | undefined {
    let read = this.windows.get(w);
    if (read === undefined && w * this.size < this.todo.length) {
      read = readPlannedRows(this.req, this.records, this.todo.slice(w * this.size, (w + 1) * this.size));
      this.windows.set(w, read);
    }
    return read;
  }
}
