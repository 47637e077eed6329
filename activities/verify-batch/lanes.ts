/**
 * A batch's lanes: each sends its rows one after another, so at most `lanes` requests are in
 * flight. What lies between a reply and the lane's next request is kept short: the next row is
 * prepared (read, payload built) while the current request is in flight, and the reply is
 * recorded (parsed, routed, stamped, written) after it. Both run after the event loop's I/O phase,
 * so when many replies arrive together (equal latencies keep the lanes in step) every lane's next
 * request leaves before that work of all of them.
 */

/** What `send` resolves with: the row's recording, run later (nothing: nothing to record). */
export type Recording = (() => void) | undefined;

export interface LaneWork<P> {
  /** Rows of the batch to send, by index 0..rows-1 (each exactly once, unless the lanes stop). */
  rows: number;
  lanes: number;
  /** False once no new row may start (aborted, draining, allowance spent): a prepared row is dropped. */
  going: () => boolean;
  prepare: (k: number) => Promise<P>;
  /** Sends a prepared row; resolves once it is answered (or given up) with its recording. */
  send: (row: P) => Promise<Recording>;
  /** A lane or a recording that threw: the batch fails with it (`going` should turn false). */
  fail: (err: Error) => void;
}

/** A row claimed by a lane, its preparation started later (or now, when the lane needs it first). */
class Ahead<P> {
  private promise: Promise<P> | null = null;
  constructor(
    private readonly k: number,
    private readonly prepare: (k: number) => Promise<P>,
  ) {}

  start(): Promise<P> {
    if (this.promise === null) {
      this.promise = this.prepare(this.k);
      this.promise.catch(() => undefined); // a lane that stopped never awaits it; one that did rethrows it
    }
    return this.promise;
  }
}

/**
 * Runs the lanes until every row is sent and answered, or they stop (an error goes to `fail`, and
 * the other lanes end when `going` says so); then runs what is left to record.
 */
export async function runLanes<P>(w: LaneWork<P>): Promise<void> {
  let next = 0;
  let later: Array<() => void> = [];
  let laterDue = false;
  const runLater = () => {
    laterDue = false;
    const due = later;
    later = [];
    for (const work of due) {
      try {
        work();
      } catch (err) {
        w.fail(err as Error);
      }
    }
  };
  const defer = (work: () => void) => {
    later.push(work);
    if (!laterDue) {
      laterDue = true;
      setImmediate(runLater);
    }
  };
  const claim = (): Ahead<P> | null => {
    if (next >= w.rows || !w.going()) return null;
    const ahead = new Ahead(next++, w.prepare);
    defer(() => void ahead.start());
    return ahead;
  };

  const lane = async () => {
    let recording: Recording;
    let ahead = next < w.rows && w.going() ? new Ahead(next++, w.prepare) : null;
    while (ahead) {
      // undici frees a keep-alive connection one event-loop turn after its reply (client-h1.js,
      // onMessageComplete): a request sent sooner opens another connection instead of reusing it.
      if (recording) {
        await nextTurn();
        if (!w.going()) break;
      }
      const sent = w.send(await ahead.start());
      ahead = claim();
      if (recording) defer(recording);
      recording = await sent;
    }
    if (recording) defer(recording);
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(w.lanes, w.rows)) }, () => lane().catch(w.fail)));
  } finally {
    runLater();
  }
}

/** Resolves after the current event-loop turn's I/O and immediates. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
