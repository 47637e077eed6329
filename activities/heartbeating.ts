import { Context } from '@temporalio/activity';

/**
 * Runs a long activity body while heartbeating on a timer (a third of the heartbeat timeout), so a
 * dead worker is noticed within that timeout even while the body waits on one long HTTP call or a
 * large file. Heartbeats carry no details: these activities restart from the beginning.
 */
export async function whileHeartbeating<T>(body: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), Math.max(1000, (ctx.info.heartbeatTimeoutMs ?? 30_000) / 3));
  try {
    return await body();
  } finally {
    clearInterval(timer);
  }
}
