/** The reference server's counters: the gaps from a judge failure to its key's next request. */
import { describe, expect, it } from 'vitest';
import { StatsRecorder } from '../../src/reference-server/server-stats.js';

describe('reference server stats: re-judgment gaps', () => {
  it('summarize the gaps by the failure ordinal with nearest-rank percentiles; a key never sent again adds none', () => {
    const stats = new StatsRecorder();
    // Ten keys fail at t = 0 and come back after 1..10 s; one of them (k9) fails again and comes back 20 s later.
    for (let k = 0; k < 10; k++) {
      stats.verifyKey(`k${k}`, 0);
      stats.judgeFailed(`k${k}`, 0);
    }
    for (let k = 0; k < 10; k++) stats.verifyKey(`k${k}`, (k + 1) * 1000);
    stats.judgeFailed('k9', 10_500);
    stats.verifyKey('k9', 30_500);
    stats.verifyKey('k9', 40_000); // no failure before it: no gap
    stats.judgeFailed('k3', 50_000); // never sent again
    expect(stats.snapshot().rejudge_gaps).toEqual({
      '1': { count: 10, p50_ms: 5000, p90_ms: 9000, max_ms: 10_000 },
      '2': { count: 1, p50_ms: 20_000, p90_ms: 20_000, max_ms: 20_000 },
    });
    expect(stats.snapshot().verify_repeats).toBe(12);
    stats.reset();
    expect(stats.snapshot().rejudge_gaps).toEqual({});
  });
});
