import { Context } from '@temporalio/activity';

/**
 * Runs a long activity body while heartbeating on a timer (a third of the heartbeat timeout), so a
 * dead worker is noticed within that timeout even while the body waits on one long HTTP call or a
 * large file. These activities restart from the beginning: their heartbeats carry no checkpoint,
 * only, when `details` gives them, what the activity waits for (shown to the user).
 */
export async function whileHeartbeating<T>(body: () => Promise<T>, details: () => unknown = () => undefined): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(details()), Math.max(1000, (ctx.info.heartbeatTimeoutMs ?? 30_000) / 3));
  try {
    return await body();
  } finally {
    clearInterval(timer);
  }
}
