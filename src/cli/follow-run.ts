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

/**
 * Follows a run until it ends: prints the workflow's messages as they appear, a line for each row
 * committed to the sidecar (dropped from the score), its progress, and why activities are being
 * retried (a verifier outage), then returns the result (or throws the run's failure).
 */
export async function followRun(handle: WorkflowHandle, opts: FollowOptions): Promise<Followed> {
  let printed = 0;
  let lastLine = 0;
  const rate = new RateMeter();
  let stop = false;
  const printMessages = (messages: string[]) => {
    if (messages.length > printed && opts.tty) opts.bar('\r\x1b[K');
    for (; printed < messages.length; printed++) opts.out(messages[printed]);
  };
  let watch: SidecarWatch | null = null;
  const deferred = opts.deferred === true;
  const watchFrom = (sidecar: string, openedAt: number, committed: number) =>
    new SidecarWatch(sidecar, openedAt, opts.attached ? committed : openedAt, deferred);
  const printDropped = async (upTo?: number) => {
    const lines = (await watch?.take(upTo)) ?? [];
    if (lines.length > 0 && opts.tty) opts.bar('\r\x1b[K');
    lines.forEach((line) => opts.out(line));
  };
  const notices = new RetryNotices();
  // `Waiting:` lines come after the messages of the same poll (as the run wrote them, then why it waits).
  const retryLines: string[] = [];
  const printRetries = () => {
    if (retryLines.length > 0 && opts.tty) opts.bar('\r\x1b[K');
    retryLines.splice(0).forEach((line) => opts.out(line));
  };
  // The counts shown never go back (a view read later may lag one read earlier by a checkpoint).
  let shown: RunView | null = null;
  let lastPrinted = 0;
  let opened = false;
  const outputsOpen = (output?: string) => {
    if (opened) return;
    opened = true;
    opts.onOutputsOpen?.(output);
  };
  const poll = async () => {
    while (!stop) {
      // The running batches' checkpoints, then the progress: one view (run-view.ts), as `status` reads it.
      const live = await readLive(handle);
      const now = Date.now();
      notices.take(live.pending, now).forEach((line) => retryLines.push(line));
      const p = live.progress;
      if (p && live.view) {
        // Rows committed to the sidecar come before the messages that follow their commit ("Re-judging: …").
        if (watch === null && p.outputs && typeof p.sidecarOpenedAt === 'number' && p.sidecarLength !== undefined)
          watch = watchFrom(p.outputs.sidecar, p.sidecarOpenedAt, p.sidecarLength);
        await printDropped(p.sidecarLength);
        if (typeof p.sidecarOpenedAt === 'number') outputsOpen(p.outputs?.output);
        printMessages(p.messages);
        shown = steadyView(shown, live.view);
        rate.add(now, shown.answered);
        if (p.phase === 'verify' || p.phase === 'rejudge-wait') {
          const line = progressLine(p, rate.perSecond(), undefined, { view: shown, outage: live.outage, now });
          if (opts.tty) opts.bar(`\r\x1b[K${line}`);
          // A plain line at most every interval, and one as soon as the first answers are in.
          else if (now - lastLine >= opts.lineIntervalMs || (lastPrinted === 0 && shown.answered > 0)) {
            lastLine = now;
            lastPrinted = shown.answered;
            opts.out(line);
          }
        }
      }
      printRetries();
      // No answer: no worker has the run yet, or the run just closed. Ask again shortly (at once
      // when the run has ended: the caller waits for this loop).
      if (!stop) await new Promise<void>((r) => (pause = { timer: setTimeout(r, POLL_MS), wake: r }));
    }
  };
  let pause: { timer: NodeJS.Timeout; wake: () => void } | null = null;
  const stopPolling = () => {
    stop = true;
    if (pause) {
      clearTimeout(pause.timer);
      pause.wake();
    }
  };
  const poller = poll();
  try {
    const result = (await handle.result()) as RunResult;
    stopPolling();
    await poller;
    if (opts.tty) opts.bar('\r\x1b[K');
    if (watch === null && typeof result.sidecarOpenedAt === 'number') {
      // The run ended before a progress answer showed its outputs: every row of it is new here,
      // unless this terminal attached (then the other one showed them).
      watch = new SidecarWatch(result.outputs.sidecar, result.sidecarOpenedAt, opts.attached ? Infinity : result.sidecarOpenedAt, deferred);
    }
    await printDropped();
    outputsOpen();
    printMessages(result.messages);
    // After every message of the run (its rounds), before the summary: the rollouts it leaves missing.
    if (watch?.deferred) (await missingAlarms(watch, result.outputs.output, result.mainAtRejudge)).forEach((line) => opts.out(line));
    return { result, routed: watch?.routed ?? null };
  } finally {
    // Also when the run failed: the poll in flight ends before the caller closes the connection
    // (a gRPC retry of it would otherwise hit the closed channel, an uncaught error).
    stopPolling();
    await poller.catch(() => undefined);
  }
}
