/**
 * The `/verify` lanes of the batches one worker process runs for one run (one workflow run of its
 * continue-as-new chain, every round), pooled. A
 * lane takes its next row from the oldest of those batches (the first to join) that has rows left
 * to send, so the share of a batch whose last rows are still being answered (a judge's slowest
 * answers can take many times its median) keeps sending the other batches' rows instead of idling
 * until the workflow launches the next batch. Oldest first, not most rows left first: the batches
 * then run out of rows one after the other, each while the younger ones still have rows for every
 * lane, instead of all together (which left every lane waiting on the window's slowest answers at
 * once, then the whole window starting again: bench/README.md, "window.ts").
 *
 * The pool never runs more lanes than its batches were given (their `parallelism`: each one's share
 * of the run's `--concurrency`): a batch joins with its lanes and leaves only once as many lanes
 * have retired (the next ones to finish a row, or idle ones), so its activity ends, and the
 * workflow gives its share to the next batch, only after the pool has given the share back. Each
 * worker process pools only the batches it runs, and batches of other runs never share a pool: the
 * ceiling holds per run across every worker, as before. A run's rounds share it: a re-judgment
 * segment's batches (workflows/segments.ts) start while the first pass still runs, and their rows
 * go first (`first`: before the older batches', a re-judgment's oldest first), so that a failure is
 * judged again soon after its delay rather than behind every row of the window.
 */

/** One row of a batch, run on a pool lane on the batch's behalf (prepared, sent, its reply recorded); never rejects. */
export type RowRun = () => Promise<void>;

/** A batch in the pool. */
export interface PooledBatch {
  /** Rows the batch still has to hand out (0 once it hands out no more). */
  left(): number;
  /** Its next row (never null while `left()` is above 0), or null when it has none to hand out. */
  claim(): RowRun | null;
  /** Starts reading its next `rows` rows to hand out, not yet claimed: the lanes take them next. */
  readAhead?(rows: number): void;
  /** Its rows go before those of the batches without it (a re-judgment). */
  readonly first?: boolean;
}

/** The lanes and batches of one run in this process. */
class Group {
  /** In the order the lanes take their rows: those `first` in join order, then the others in join order. */
  batches = new Set<PooledBatch>();
  /** Lanes running: busy with a row, or parked. */
  lanes = 0;
  /** Parked lanes (no row to take): woken when a batch joins or one leaves. */
  parked: Array<() => void> = [];
  /** Batches leaving, first first: how many lanes each still waits to see retire. */
  readonly leaving: Array<{ lanes: number; retired: () => void }> = [];
  /** Waiting for a lane to find no row to take (`drained`). */
  drainedWaiters: Array<() => void> = [];
  /** Loans waiting for a batch (not another loan) to join. */
  joinWaiters: Array<() => void> = [];
}

/** The members lent lanes join as: they hand out no rows. */
const loans = new WeakSet<PooledBatch>();

/** The pool group of one run (a workflow run's id pair, or an activity's id outside one). */
export function laneGroup(info: { workflowExecution?: { workflowId: string; runId: string }; activityId: string }): string {
  const run = info.workflowExecution;
  return run ? `${run.workflowId} ${run.runId}` : `activity ${info.activityId}`;
}

export class LanePool {
  private readonly groups = new Map<string, Group>();

  /**
   * Adds `batch` and `lanes` lanes to the pool of `group` (a run). Call `leave()` once the
   * batch has no row in flight: it hands out no more and resolves once `lanes` lanes have retired.
   */
  join(group: string, batch: PooledBatch, lanes: number): { leave(): Promise<void> } {
    let g = this.groups.get(group);
    if (g === undefined) {
      g = new Group();
      this.groups.set(group, g);
    }
    const own = g;
    if (batch.first) {
      const all = [...own.batches];
      const at = all.findIndex((b) => !b.first);
      if (at >= 0) all.splice(at, 0, batch);
      else all.push(batch);
      own.batches = new Set(all);
    } else own.batches.add(batch);
    own.lanes += lanes;
    this.wake(own);
    // A batch with rows, not another loan, is what a waiting loan waits for.
    if (!loans.has(batch)) {
      const joinWaiters = own.joinWaiters;
      own.joinWaiters = [];
      for (const joined of joinWaiters) joined();
    }
    for (let i = 0; i < lanes; i++) void this.lane(group, own);
    let left: Promise<void> | undefined;
    return {
      leave: () =>
        (left ??= new Promise<void>((retired) => {
          own.batches.delete(batch);
          own.leaving.push({ lanes, retired });
          this.wake(own);
        })),
    };
  }

  /**
   * Lends `lanes` lanes to the batches of `group` (the round's last batches, once the workflow has
   * no batch left to give the share of one that ended): they take rows as the batches' own lanes
   * do. Resolves once no batch of the group in this process has a row left to hand out, or `stop`
   * aborts, and the lanes have retired. When the group has no batch here yet, it first waits up to
   * `waitMs` for one to join (a batch launched with the loan may start after it).
   */
  async lend(group: string, lanes: number, stop: AbortSignal, waitMs = 0): Promise<void> {
    const lender: PooledBatch = { left: () => 0, claim: () => null };
    loans.add(lender);
    const member = this.join(group, lender, lanes);
    const g = this.groups.get(group)!;
    const until = (waiters: Array<() => void>, ms?: number) =>
      new Promise<void>((resume) => {
        const done = () => {
          clearTimeout(timer);
          stop.removeEventListener('abort', done);
          resume();
        };
        const timer = ms === undefined ? undefined : setTimeout(done, ms);
        waiters.push(done);
        stop.addEventListener('abort', done, { once: true });
      });
    const hasRows = () => [...g.batches].some((b) => b.left() > 0);
    // No batch of the group here yet (those launched with the loan may start after it).
    if ([...g.batches].every((b) => loans.has(b)) && waitMs > 0 && !stop.aborted) await until(g.joinWaiters, waitMs);
    if (hasRows() && !stop.aborted) await until(g.drainedWaiters);
    await member.leave();
  }

  /** Lanes running in `group`'s pool (for tests). */
  lanesOf(group: string): number {
    return this.groups.get(group)?.lanes ?? 0;
  }

  private async lane(group: string, g: Group): Promise<void> {
    let ran = false;
    for (;;) {
      if (this.retire(group, g)) return;
      const run = this.next(g);
      if (run === null) {
        this.drained(g);
        await new Promise<void>((wake) => g.parked.push(wake));
        continue;
      }
      // undici frees a keep-alive connection one event-loop turn after its reply (client-h1.js,
      // onMessageComplete): a request sent sooner opens another connection instead of reusing it.
      if (ran) await nextTurn();
      ran = true;
      // A row's run reports its own failures to its batch; a lane outlives any that escapes.
      await run().catch(() => undefined);
    }
  }

  /** The row of the first batch with rows left (`Group.batches`' order), or null when no batch has one. */
  private next(g: Group): RowRun | null {
    for (const b of g.batches) {
      if (b.left() > 0) {
        const run = b.claim();
        this.readAhead(g);
        return run;
      }
    }
    return null;
  }

  /**
   * The rows the lanes take next, as many as there are lanes, are read ahead by their batches, in
   * the order the lanes take them: across batches, since at a high concurrency the lanes take a
   * whole batch's rows within one answer's time. Reading only its own next window, the next batch
   * started its reads when the lanes reached it, and most lanes waited on them together instead
   * of sending (bench/README.md, issue 33 item 1).
   */
  private readAhead(g: Group): void {
    let rows = g.lanes;
    for (const b of g.batches) {
      if (rows <= 0) return;
      const left = b.left();
      if (left <= 0) continue;
      b.readAhead?.(Math.min(left, rows));
      rows -= left;
    }
  }

  /** Retires this lane if a leaving batch waits for lanes (true: the lane ends). */
  private retire(group: string, g: Group): boolean {
    const first = g.leaving[0];
    if (first === undefined) return false;
    g.lanes--;
    if (--first.lanes === 0) {
      g.leaving.shift();
      first.retired();
    }
    if (g.lanes === 0 && g.batches.size === 0 && this.groups.get(group) === g) this.groups.delete(group);
    return true;
  }

  /** A lane found no row to take: whoever waits for that is told. */
  private drained(g: Group): void {
    const waiters = g.drainedWaiters;
    g.drainedWaiters = [];
    for (const drained of waiters) drained();
  }

  private wake(g: Group): void {
    const parked = g.parked;
    g.parked = [];
    for (const wake of parked) wake();
  }
}

/** Resolves after the current event-loop turn's I/O and immediates. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
