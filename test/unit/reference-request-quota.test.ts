import { describe, expect, it } from 'vitest';
import { RequestQuota, retryAfterHeader } from '../../src/reference-server/request-quota.js';

/** Sends one request per key in `keys` at time `t`; returns the Retry-After (ms) of each, or 0 when let in. */
function burstAt(quota: RequestQuota, t: number, keys: string[]): number[] {
  return keys.map((key) => {
    const d = quota.take(t, key);
    return d.ok ? 0 : d.retryAfterMs;
  });
}

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('the reference server quota (--rpm)', () => {
  it('lets a burst of one second of the quota in, then refuses', () => {
    const quota = new RequestQuota(600); // one token per 100 ms, 10 saved up
    const waits = burstAt(quota, 0, keys('a', 12));
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(waits.slice(10)).toEqual([100, 200]);
  });

  it('books each refused row the next token: told to come back one token apart, each gets in then', () => {
    const quota = new RequestQuota(60, 1); // one token per second, none saved up
    expect(quota.take(0, 'first')).toEqual({ ok: true });
    const refused = keys('r', 5);
    const waits = burstAt(quota, 10, refused);
    expect(waits).toEqual([990, 1990, 2990, 3990, 4990]);
    expect(quota.bookings).toBe(5);
    refused.forEach((key, i) => expect(quota.take(10 + waits[i], key)).toEqual({ ok: true }));
    expect(quota.bookings).toBe(0);
  });

  it('a booked token is not taken by a new request, and a row that comes back late still gets in', () => {
    const quota = new RequestQuota(60, 1);
    quota.take(0, 'first');
    const [wait] = burstAt(quota, 0, ['booked']);
    expect(quota.take(wait, 'new')).toEqual({ ok: false, retryAfterMs: 1000 }); // the token at `wait` is booked
    expect(quota.take(wait + 5000, 'booked')).toEqual({ ok: true });
  });

  it('a row that comes back early is refused again, its booking kept', () => {
    const quota = new RequestQuota(60, 1);
    quota.take(0, 'first');
    quota.take(0, 'early');
    expect(quota.take(400, 'early')).toEqual({ ok: false, retryAfterMs: 600 });
    expect(quota.take(1000, 'early')).toEqual({ ok: true });
  });

  it('never lets in more than the quota: a minute of steady demand gets at most rpm + burst requests in', () => {
    const quota = new RequestQuota(3000); // 20 ms per token, 50 saved up
    let admitted = 0;
    let n = 0;
    const waiting = new Map<string, number>(); // key -> when it was told to come back
    for (let t = 0; t < 60_000; t += 5) {
      for (const [key, at] of waiting) {
        if (at > t) continue;
        waiting.delete(key);
        if (quota.take(t, key).ok && at < 60_000) admitted++;
      }
      const key = `k${n++}`;
      const d = quota.take(t, key);
      if (d.ok) admitted++;
      else waiting.set(key, t + d.retryAfterMs);
    }
    expect(admitted).toBeLessThanOrEqual(3000 + 50);
    expect(admitted).toBeGreaterThanOrEqual(3000 + 50 - 2);
  });

  it('Retry-After is seconds with millisecond precision', () => {
    expect(retryAfterHeader(1234)).toBe('1.234');
    expect(retryAfterHeader(-5)).toBe('0.000');
  });

  it('refuses a quota that is not positive', () => {
    expect(() => new RequestQuota(0)).toThrow(/rpm must be > 0/);
  });
});
