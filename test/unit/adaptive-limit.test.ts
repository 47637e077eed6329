import { describe, expect, it } from 'vitest';
import { adaptLimit, LATENCY_SLACK_MS, MIN_LATENCY_ANSWERS, SETTLED_STEP, type LimitState } from '../../workflows/adaptive-limit.js';

const healthy = (latency: number, answers = MIN_LATENCY_ANSWERS) => ({
  throttled: 0,
  latencyMsSum: latency * answers,
  latencyCount: answers,
});

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

  it("judges latency over enough answers: a small batch's are pooled with the next ones', so a few slow answers cut nothing", () => {
    const base: LimitState = { effective: 32, baselineLatencyMs: 100 };
    // 3 answers of a heavy tail, mean 1 s: not judged yet; the limit stays, the answers wait.
    const slowFew = adaptLimit(base, 32, healthy(1000, 3));
    expect(slowFew).toMatchObject({ effective: 32, baselineLatencyMs: 100, pendingLatency: { msSum: 3000, count: 3 } });
    // Pooled with a healthy batch of 29 answers at 100 ms: mean (3000 + 2900) / 32 ≈ 184 ms, under the cut.
    const judged = adaptLimit(slowFew, 32, healthy(100, MIN_LATENCY_ANSWERS - 3));
    expect(judged.effective).toBe(32);
    expect(judged.pendingLatency).toBeUndefined();
    // Enough slow answers are still a cut.
    expect(adaptLimit(slowFew, 32, healthy(1000, MIN_LATENCY_ANSWERS)).effective).toBe(24);
  });

  it('a lowered ceiling (operator update) applies at once', () => {
    expect(adaptLimit({ effective: 32, baselineLatencyMs: 10 }, 8, healthy(10)).effective).toBe(8);
  });

  it('a batch without answers keeps the limit (within the ceiling)', () => {
    expect(adaptLimit({ effective: 12, baselineLatencyMs: 10 }, 32, { throttled: 0, latencyMsSum: 0, latencyCount: 0 }).effective).toBe(12);
  });

  it('a throttled batch that reports its busy and held time sets the limit to the slots its quota kept busy', () => {
    // Launched at 64: its rows spent 1/4 of their time on the judge and 3/4 waiting out Retry-Afters.
    const quota = { throttled: 40, latencyMsSum: 0, latencyCount: 0, busyMsSum: 1000, throttleWaitMsSum: 3000, launchLimit: 64 };
    const s = adaptLimit({ effective: 64, baselineLatencyMs: 100 }, 64, quota);
    // 16 slots busy, plus one step above them (a 429 costs little, an unused token is lost).
    expect(s).toMatchObject({ effective: 17, throttledOnce: true });
    // A batch launched before that cut (at 64 again) gives the same estimate, not a second cut.
    expect(adaptLimit(s, 64, quota).effective).toBe(17);
    // Without the sums (earlier versions, or no wait measured) it halves.
    expect(adaptLimit(s, 64, { ...quota, throttleWaitMsSum: 0 }).effective).toBe(8);
  });

  it('once throttled, it grows by a small share of the limit, so that it settles near the quota', () => {
    let s: LimitState = { effective: 40, baselineLatencyMs: 100, throttledOnce: true };
    s = adaptLimit(s, 256, healthy(100));
    expect(s.effective).toBe(40 + Math.round(40 * SETTLED_STEP));
    s = adaptLimit({ effective: 3, baselineLatencyMs: 100, throttledOnce: true }, 256, healthy(100));
    expect(s.effective).toBe(4);
    // A healthy batch launched below the limit in force says nothing of it: no step.
    expect(adaptLimit(s, 256, { ...healthy(100), launchLimit: 3 }).effective).toBe(4);
    expect(adaptLimit(s, 256, { ...healthy(100), launchLimit: 4 }).effective).toBe(5);
  });

  it('settles within 5 % of a quota: throttled batches cut to the busy slots, healthy ones step up', () => {
    // A judge taking 50 requests in flight (its quota × latency): batches above it are throttled
    // and kept `50 / limit` of their slots busy; below it they are healthy.
    const fit = 50;
    let s: LimitState = { effective: 256, baselineLatencyMs: null };
    const seen: number[] = [];
    for (let i = 0; i < 200; i++) {
      const limit = s.effective;
      const batch =
        limit > fit
          ? {
              throttled: 5,
              latencyMsSum: 0,
              latencyCount: 0,
              busyMsSum: fit * 1000,
              throttleWaitMsSum: (limit - fit) * 1000,
              launchLimit: limit,
            }
          : healthy(100);
      s = adaptLimit(s, 256, batch);
      seen.push(s.effective);
    }
    for (const limit of seen.slice(20)) expect(Math.abs(limit - fit) / fit).toBeLessThanOrEqual(0.05);
  });
});
