import type { WorkflowHandle } from '@temporalio/client';
import type { RunResult } from '../contract/run-spec.js';
import { progressLine, RateMeter, rowsFinished } from './progress-view.js';
import { queryProgress } from './query-progress.js';
import { pendingActivities, RetryNotices } from './retry-notices.js';

/** How often the run's retried activities are looked at (a `describe` call). */
const RETRY_CHECK_MS = 2000;

export interface FollowOptions {
  /** Print a progress bar (TTY) instead of periodic plain lines. */
  tty: boolean;
  /** Plain progress line interval when not a TTY. */
  lineIntervalMs: number;
  out: (line: string) => void;
  /** Writes without a newline (the bar on a TTY). */
  bar: (text: string) => void;
}

/**
 * Follows a run until it ends: prints the workflow's messages as they appear, its progress, and
 * why activities are being retried (a verifier outage), then returns the result (or throws the
 * run's failure).
 */
export async function followRun(handle: WorkflowHandle, opts: FollowOptions): Promise<RunResult> {
  let printed = 0;
  let lastLine = 0;
  const rate = new RateMeter();
  let stop = false;
  const printMessages = (messages: string[]) => {
    if (messages.length > printed && opts.tty) opts.bar('\r\x1b[K');
    for (; printed < messages.length; printed++) opts.out(messages[printed]);
  };
  const notices = new RetryNotices();
  let lastRetryCheck = Date.now();
  const printRetries = async (now: number) => {
    if (now - lastRetryCheck < RETRY_CHECK_MS) return;
    lastRetryCheck = now;
    const lines = notices.take(await pendingActivities(handle), now);
    if (lines.length > 0 && opts.tty) opts.bar('\r\x1b[K');
    lines.forEach((line) => opts.out(line));
  };
  const poll = async () => {
    while (!stop) {
      const p = await queryProgress(handle);
      if (p) {
        printMessages(p.messages);
        const now = Date.now();
        rate.add(now, rowsFinished(p));
        if (p.phase === 'verify' || p.phase === 'rejudge-wait') {
          if (opts.tty) opts.bar(`\r\x1b[K${progressLine(p, rate.perSecond())}`);
          else if (now - lastLine >= opts.lineIntervalMs) {
            lastLine = now;
            opts.out(progressLine(p, rate.perSecond()));
          }
        }
      }
      await printRetries(Date.now());
      // No answer: no worker has the run yet, or the run just closed. Ask again shortly.
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  const poller = poll();
  try {
    const result = (await handle.result()) as RunResult;
    stop = true;
    await poller;
    if (opts.tty) opts.bar('\r\x1b[K');
    printMessages(result.messages);
    return result;
  } finally {
    stop = true;
  }
}
