import type { WorkflowHandle } from '@temporalio/client';
import type { RunResult } from '../contract/run-spec.js';
import { steadyView, type RunView } from '../contract/run-view.js';
import { readLive } from './live-state.js';
import { progressLine, RateMeter } from './progress-view.js';
import { RetryNotices } from './retry-notices.js';
import { missingAlarms } from './missing-alarms.js';
import { SidecarWatch } from './sidecar-watch.js';

/** How often the run is looked at (a `describe` and a progress query). */
const POLL_MS = 1000;

export interface FollowOptions {
  /** Print a progress bar (TTY) instead of periodic plain lines. */
  tty: boolean;
  /** Plain progress line interval when not a TTY. */
  lineIntervalMs: number;
  out: (line: string) => void;
  /** Writes without a newline (the bar on a TTY). */
  bar: (text: string) => void;
  /** This terminal attached to a run another one started: rows dropped before now were shown there. */
  attached?: boolean;
  /**
   * The run re-judges its judge failures in later rounds: no `🚨` line as a row reaches the sidecar
   * (a later round may score it), but one per rollout still missing at the end (missing-alarms.ts).
   */
  deferred?: boolean;
  /** Called once, when the run has opened its outputs (its plan is done and proven; `output`: its main output), or at its end. */
  onOutputsOpen?: (output?: string) => void;
}

/** A followed run's result, and the failure classes of the rows it routed to the sidecar. */
export interface Followed {
  result: RunResult;
  routed: ReadonlyMap<string, number> | null;
}

/** What one terminal following a run has printed so far, and how it prints the next poll. */
class RunFollower {
  private printed = 0;
  private lastLine = 0;
  private lastPrinted = 0;
  private readonly rate = new RateMeter();
  private readonly notices = new RetryNotices();
  /** `Waiting:` lines come after the messages of the same poll (as the run wrote them, then why it waits). */
  private readonly retryLines: string[] = [];
  /** The counts shown never go back (a view read later may lag one read earlier by a checkpoint). */
  private shown: RunView | null = null;
  private opened = false;
  watch: SidecarWatch | null = null;

  constructor(private readonly opts: FollowOptions) {}

  private get deferred(): boolean {
    return this.opts.deferred === true;
  }

  /** Prints `lines` under the bar (cleared first on a TTY). */
  private print(lines: readonly string[]): void {
    if (lines.length > 0 && this.opts.tty) this.opts.bar('\r\x1b[K');
    lines.forEach((line) => this.opts.out(line));
  }

  printMessages(messages: string[]): void {
    this.print(messages.slice(this.printed));
    this.printed = Math.max(this.printed, messages.length);
  }

  async printDropped(upTo?: number): Promise<void> {
    this.print((await this.watch?.take(upTo)) ?? []);
  }

  outputsOpen(output?: string): void {
    if (this.opened) return;
    this.opened = true;
    this.opts.onOutputsOpen?.(output);
  }

  /** One look at the run: its checkpoints and progress (one view, run-view.ts, as `status` reads it). */
  async poll(handle: WorkflowHandle): Promise<void> {
    const live = await readLive(handle);
    const now = Date.now();
    this.retryLines.push(...this.notices.take(live.pending, now));
    const p = live.progress;
    if (p && live.view) {
      // Rows committed to the sidecar come before the messages that follow their commit ("Re-judging: …").
      if (this.watch === null && p.outputs && typeof p.sidecarOpenedAt === 'number' && p.sidecarLength !== undefined)
        this.watch = new SidecarWatch(
          p.outputs.sidecar,
          p.sidecarOpenedAt,
          this.opts.attached ? p.sidecarLength : p.sidecarOpenedAt,
          this.deferred,
        );
      await this.printDropped(p.sidecarLength);
      if (typeof p.sidecarOpenedAt === 'number') this.outputsOpen(p.outputs?.output);
      this.printMessages(p.messages);
      this.shown = steadyView(this.shown, live.view);
      this.rate.add(now, this.shown.answered);
      if (p.phase === 'verify' || p.phase === 'rejudge-wait')
        this.progress(progressLine(p, this.rate.perSecond(), undefined, { view: this.shown, outage: live.outage, now }), now);
    }
    this.print(this.retryLines.splice(0));
  }

  /** The bar on a TTY; else a plain line at most every interval, and one as soon as the first answers are in. */
  private progress(line: string, now: number): void {
    if (this.opts.tty) return this.opts.bar(`\r\x1b[K${line}`);
    const answered = this.shown?.answered ?? 0;
    if (now - this.lastLine < this.opts.lineIntervalMs && !(this.lastPrinted === 0 && answered > 0)) return;
    this.lastLine = now;
    this.lastPrinted = answered;
    this.opts.out(line);
  }

  /** The end: rows, messages and the alarms for rollouts still missing, after the last poll. */
  async finish(result: RunResult): Promise<Followed> {
    if (this.opts.tty) this.opts.bar('\r\x1b[K');
    if (this.watch === null && typeof result.sidecarOpenedAt === 'number') {
      // The run ended before a progress answer showed its outputs: every row of it is new here,
      // unless this terminal attached (then the other one showed them).
      this.watch = new SidecarWatch(
        result.outputs.sidecar,
        result.sidecarOpenedAt,
        this.opts.attached ? Infinity : result.sidecarOpenedAt,
        this.deferred,
      );
    }
    await this.printDropped();
    this.outputsOpen();
    this.printMessages(result.messages);
    // After every message of the run (its rounds), before the summary: the rollouts it leaves missing.
    if (this.watch?.deferred)
      (await missingAlarms(this.watch, result.outputs.output, result.mainAtRejudge)).forEach((line) => this.opts.out(line));
    return { result, routed: this.watch?.routed ?? null };
  }
}

/** A loop that can be woken from its pause and stopped. */
class PollLoop {
  private stopped = false;
  private pause: { timer: NodeJS.Timeout; wake: () => void } | null = null;
  readonly done: Promise<void>;

  constructor(step: () => Promise<void>) {
    this.done = this.run(step);
  }

  private async run(step: () => Promise<void>): Promise<void> {
    while (!this.stopped) {
      await step();
      // No answer: no worker has the run yet, or the run just closed. Ask again shortly (at once
      // when the run has ended: the caller waits for this loop).
      if (!this.stopped) await new Promise<void>((wake) => (this.pause = { timer: setTimeout(wake, POLL_MS), wake }));
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.pause) {
      clearTimeout(this.pause.timer);
      this.pause.wake();
    }
  }
}

/**
 * Follows a run until it ends: prints the workflow's messages as they appear, a line for each row
 * committed to the sidecar (dropped from the score), its progress, and why activities are being
 * retried (a verifier outage), then returns the result (or throws the run's failure).
 */
export async function followRun(handle: WorkflowHandle, opts: FollowOptions): Promise<Followed> {
  const follower = new RunFollower(opts);
  const loop = new PollLoop(() => follower.poll(handle));
  try {
    const result = (await handle.result()) as RunResult;
    loop.stop();
    await loop.done;
    return await follower.finish(result);
  } finally {
    // Also when the run failed: the poll in flight ends before the caller closes the connection
    // (a gRPC retry of it would otherwise hit the closed channel, an uncaught error).
    loop.stop();
    await loop.done.catch(() => undefined);
  }
}
