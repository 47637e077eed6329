/**
 * A batch's rows on the lanes of its process's pool (lane-pool.ts): each lane sends one row after
 * another, its own batch's or another's of the same round, so at most the pool's lanes (the sum of
 * its batches' `lanes`) requests are in flight. A row's reply is recorded (parsed, routed, stamped,
 * written) after the event loop's I/O phase, so when many replies arrive together every lane's
 * next request leaves before that work of all of them.
 */

import type { LanePool } from './lane-pool.js';

/** What `send` resolves with: the row's recording, run later (nothing: nothing to record). */
export type Recording = (() => void) | undefined;

export interface LaneWork<P> {
  /** Rows of the batch to send, by index 0..rows-1 (each exactly once, unless the lanes stop). */
  rows: number;
  lanes: number;
  /** False once no new row may start (aborted, draining, allowance spent): a prepared row is dropped. */
  going: () => boolean;
  prepare: (k: number) => Promise<P>;
  /** Starts reading rows from..from+rows-1 (not yet prepared), which the pool's lanes take next. */
  readAhead?: (from: number, rows: number) => void;
  /** Sends a prepared row; resolves once it is answered (or given up) with its recording. */
  send: (row: P) => Promise<Recording>;
  /** A lane or a recording that threw: the batch fails with it (`going` should turn false). */
  fail: (err: Error) => void;
  /** Its rows go before the other batches' in the pool (a re-judgment: lane-pool.ts). */
  first?: boolean;
}

/**
 * Work run after the current event-loop turn's I/O (`setImmediate`), in order, all of what is due
 * at once; `run()` runs what is left now. A work that throws goes to `fail`.
 */
class Later {
  private due: Array<() => void> = [];
  private scheduled = false;
  constructor(private readonly fail: (err: Error) => void) {}

  defer(work: () => void): void {
    this.due.push(work);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.run());
    }
  }

  run(): void {
    this.scheduled = false;
    const due = this.due;
    this.due = [];
    for (const work of due) {
      try {
        work();
      } catch (err) {
        this.fail(err as Error);
      }
    }
  }
}

/** How often a pooled batch looks whether it stopped while none of its rows was in flight. */
const STOPPED_CHECK_MS = 100;

/**
 * Sends the batch's rows until every row is sent and answered, or they stop (an error goes to
 * `fail`, and no row starts once `going` says so). The batch joins the pool of `group` (its run's
 * round) with its `lanes`, whose lanes send its rows and the rows of the group's other batches in
 * this process, and leaves once every row it handed out is answered (or, stopped, once those in
 * flight ended), after as many lanes have retired; then what is left to record is run. A row is
 * prepared (read, payload built) when a lane takes it.
 */
export async function runPooledLanes<P>(w: LaneWork<P>, pool: LanePool, group: string): Promise<void> {
  let next = 0;
  let inFlight = 0;
  const later = new Later(w.fail);
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const check = () => {
    if (inFlight === 0 && (next >= w.rows || !w.going())) finish();
  };
  const member = pool.join(
    group,
    {
      first: w.first,
      left: () => (w.going() ? w.rows - next : 0),
      readAhead: (rows) => w.readAhead?.(next, rows),
      claim: () => {
        if (next >= w.rows || !w.going()) return null;
        const k = next++;
        inFlight++;
        return async () => {
          try {
            const prepared = await w.prepare(k);
            // Stopped while it was prepared: not sent (the row stays unfinished).
            if (!w.going()) return;
            const recording = await w.send(prepared);
            if (recording) later.defer(recording);
          } catch (err) {
            w.fail(err as Error);
          } finally {
            inFlight--;
            check();
          }
        };
      },
    },
    Math.max(1, Math.min(w.lanes, w.rows)),
  );
  // Stopped (aborted, draining, allowance spent) while no row of its was in flight: no row ends to say so.
  const stopped = setInterval(check, STOPPED_CHECK_MS);
  check();
  try {
    await finished;
  } finally {
    clearInterval(stopped);
    await member.leave();
    later.run();
  }
}
