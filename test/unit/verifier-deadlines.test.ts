import { describe, expect, it } from 'vitest';
import { DeadlineExceeded, Deadlines, type RequestSignal } from '../../src/verifier/deadlines.js';

/** Resolves `value` after `ms`, or rejects with the signal's reason when it aborts first (as undici does). */
function work<T>(signal: RequestSignal, ms: number, value: T): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => resolve(value), ms);
    signal.once('abort', () => {
      clearTimeout(t);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(signal.reason);
    });
  });
}

describe('Deadlines (one sweep timer for every request in flight)', () => {
  it('each request gets its own deadline: the slow one times out, the quick ones finish', async () => {
    const d = new Deadlines();
    // Rejected only by its deadline (its work would take a minute); the others' deadlines are far
    // beyond their work, and 'later' ends after the slow one's deadline: no shared deadline.
    const results = await Promise.allSettled([
      d.run(150, undefined, (s) => work(s, 60_000, 'slow')),
      d.run(60_000, undefined, (s) => work(s, 20, 'quick')),
      d.run(60_000, undefined, (s) => work(s, 300, 'later')),
    ]);
    expect(results[0].status).toBe('rejected');
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(DeadlineExceeded);
    expect((results[0] as PromiseRejectedResult).reason.message).toBe('no complete reply within 150 ms (request timeout)');
    expect(results.slice(1)).toEqual([
      { status: 'fulfilled', value: 'quick' },
      { status: 'fulfilled', value: 'later' },
    ]);
  });

  it("a caller's abort reaches the request with the caller's reason, not as a timeout", async () => {
    const d = new Deadlines();
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('cancelled by Temporal')), 50);
    await expect(d.run(60_000, ac.signal, (s) => work(s, 5_000, 'x'))).rejects.toThrow('cancelled by Temporal');
    await expect(d.run(60_000, ac.signal, (s) => work(s, 10, 'x'))).rejects.toThrow('cancelled by Temporal');
  });

  it('a failure of the request itself is passed through', async () => {
    const d = new Deadlines();
    await expect(d.run(1_000, undefined, async () => Promise.reject(new Error('ECONNRESET')))).rejects.toThrow('ECONNRESET');
    expect(await d.run(1_000, undefined, async () => 42)).toBe(42);
  });
});
