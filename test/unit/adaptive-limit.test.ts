import { describe, expect, it } from 'vitest';
import { adaptLimit, LATENCY_SLACK_MS, type LimitState } from '../../workflows/adaptive-limit.js';

const healthy = (latency: number) => ({ throttled: 0, latencyMsSum: latency * 10, latencyCount: 10 });

describe('adaptive concurrency (AIMD)', () => {
  it('halves the limit when the verifier throttles (429/503), never below 1', () => {
    let s: LimitState = { effective: 32, baselineLatencyMs: 100 };
    s = adaptLimit(s, 32, { throttled: 3, latencyMsSum: 0, latencyCount: 0 });
    expect(s.effective).toBe(16);
    for (let i = 0; i < 10; i++) s = adaptLimit(s, 32, { throttled: 1, latencyMsSum: 0, latencyCount: 0 });
    expect(s.effective).toBe(1);
  });

  it('raises it additively while healthy, up to the ceiling', () => {
    let s: LimitState = { effective: 1, baselineLatencyMs: null };
    const seen: number[] = [];
    for (let i = 0; i < 12; i++) {
      s = adaptLimit(s, 32, healthy(100));
      seen.push(s.effective);
    }
    expect(seen.slice(0, 3)).toEqual([5, 9, 13]);
    expect(s.effective).toBe(32);
  });

  it('cuts it by a quarter when latency climbs well above the baseline, and not for small jitter', () => {
    const base: LimitState = { effective: 32, baselineLatencyMs: 100 };
    expect(adaptLimit(base, 32, healthy(2 * 100 + LATENCY_SLACK_MS + 1)).effective).toBe(24);
    expect(adaptLimit(base, 32, healthy(2 * 100 + LATENCY_SLACK_MS - 1)).effective).toBe(32);
  });

  it('a lowered ceiling (operator update) applies at once', () => {
    expect(adaptLimit({ effective: 32, baselineLatencyMs: 10 }, 8, healthy(10)).effective).toBe(8);
  });

  it('a batch without answers keeps the limit (within the ceiling)', () => {
    expect(adaptLimit({ effective: 12, baselineLatencyMs: 10 }, 32, { throttled: 0, latencyMsSum: 0, latencyCount: 0 }).effective).toBe(12);
  });
});
