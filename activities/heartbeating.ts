import { Context } from '@temporalio/activity';

/**
 * Runs a long activity body while heartbeating on a timer (a third of the heartbeat timeout), so a
 * dead worker is noticed within that timeout even while the body waits on one long HTTP call or a
 * large file. These activities restart from the beginning: their heartbeats carry no checkpoint,
 * only, when `details` gives them, what the activity waits for (shown to the user). A heartbeat is
 * also when a cancellation reaches the activity: `everyMs` shorter hears it sooner.
 */
export async function whileHeartbeating<T>(
  body: () => Promise<T>,
  details: () => unknown = () => undefined,
  everyMs = Math.max(1000, (Context.current().info.heartbeatTimeoutMs ?? 30_000) / 3),
): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(details()), everyMs);
  try {
    return await body();
  } finally {
    clearInterval(timer);
  }
}
