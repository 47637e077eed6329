import { describe, expect, it } from 'vitest';
import type { Phase, Progress } from '../../src/contract/run-spec.js';
import { batchBeats, outageOf } from '../../src/cli/live-state.js';
import { progressLine, RateMeter } from '../../src/cli/progress-view.js';
import { runView } from '../../src/contract/run-view.js';
import { defaultPayloadConverter } from '@temporalio/common';

function progress(over: Partial<Progress> = {}): Progress {
  // `as Progress`: the query's shape grows (e.g. `round`); these tests use only the fields below.
  return {
    phase: 'verify',
    round: 0,
    planned: 400,
    done: 117,
    failed: 3,
    dropped: 0,
    rejected: 0,
    judgeFailed: 0,
    inFlightRows: 0,
    perAgent: {},
    messages: [],
    outputs: null,
    generation: 0,
    ...over,
  } as Progress;
}

/** The text after `ETA `. */
const eta = (line: string) => line.slice(line.lastIndexOf('ETA ') + 4);
/** The bar between `[` and `]`. */
const bar = (line: string) => line.slice(1, line.indexOf(']'));

describe('RateMeter', () => {
  it('no or one sample: 0', () => {
    const m = new RateMeter();
    expect(m.perSecond()).toBe(0);
    m.add(1_000, 10);
    expect(m.perSecond()).toBe(0);
  });

  it('two samples: rows per second between them', () => {
    const m = new RateMeter();
    m.add(0, 0);
    m.add(2_000, 90);
    expect(m.perSecond()).toBe(45);
  });

  it('samples at the same instant: 0, not Infinity/NaN', () => {
    const m = new RateMeter();
    m.add(5_000, 10);
    m.add(5_000, 20);
    expect(m.perSecond()).toBe(0);
  });

  it('only the last window counts: a change of speed shows once the old samples leave it', () => {
    const m = new RateMeter(5_000);
    let n = 0;
    // 10 rows/s for 20 s, then 100 rows/s for 20 s, one sample per second
    for (let t = 0; t <= 20; t++) {
      m.add(t * 1000, n);
      n += 10;
    }
    expect(m.perSecond()).toBeCloseTo(10, 9);
    n -= 10;
    for (let t = 21; t <= 40; t++) {
      n += 100;
      m.add(t * 1000, n);
    }
    expect(m.perSecond()).toBeCloseTo(100, 9);
  });

  it('the default window is 15 s', () => {
    const m = new RateMeter();
    let n = 0;
    for (let t = 0; t <= 60; t++) {
      m.add(t * 1000, n);
      n += t < 30 ? 1 : 50;
    }
    // after 30 s at 50 rows/s every sample in the 15 s window is from the fast phase
    expect(m.perSecond()).toBeCloseTo(50, 9);
    // a meter whose window covers the whole run averages both phases
    const wide = new RateMeter(120_000);
    n = 0;
    for (let t = 0; t <= 60; t++) {
      wide.add(t * 1000, n);
      n += t < 30 ? 1 : 50;
    }
    expect(wide.perSecond()).toBeCloseTo((30 * 1 + 30 * 50) / 60, 9);
  });

  it('with samples further apart than the window, the last two still give a rate', () => {
    const m = new RateMeter(15_000);
    m.add(0, 0);
    m.add(60_000, 600);
    expect(m.perSecond()).toBe(10);
    m.add(120_000, 1800);
    expect(m.perSecond()).toBe(20);
  });
});

describe('answered rows', () => {
  it('done + failed + dropped; rejected and judgeFailed are part of failed, not added again', () => {
    expect(runView(progress({ done: 10, failed: 5, dropped: 2, rejected: 3, judgeFailed: 2, inFlightRows: 50 })).answered).toBe(17);
    expect(runView(progress({ done: 0, failed: 0, dropped: 0 })).answered).toBe(0);
  });
});

describe('progressLine', () => {
  it('the full verify line', () => {
    expect(progressLine(progress(), 45.2)).toBe('[#######.................] 120/400 rollouts  117 ok  3 failed  45.2 rows/s  ETA 6s');
  });

  it('a request budget shows its count; paused on it, the line says so (no budget: nothing added)', () => {
    const budget = { requests: { used: 15, max: 15 }, paused: true, budgetPaused: true };
    expect(progressLine(progress(budget), 0)).toBe(
      '[#######.................] 120/400 rollouts  117 ok  3 failed  0.0 rows/s  ETA ?  requests 15/15  PAUSED: request budget spent',
    );
    expect(progressLine(progress({ requests: { used: 15, max: null } }), 45.2)).toBe(progressLine(progress(), 45.2));
  });

  it('once a stop rule fired: the rule and the batches in flight still finishing; none left: where it stopped', () => {
    const stoppedEarly = { rule: 'delta-excludes-zero', rows: 120, planned: 400 };
    const running = [
      { batch: 7, rows: 20, slots: 4 },
      { batch: 8, rows: 20, slots: 4 },
    ];
    expect(progressLine(progress({ stoppedEarly, running }), 45.2)).toBe(
      '[#######.................] 120/400 rollouts  117 ok  3 failed  45.2 rows/s  ETA 6s  stopped early: delta-excludes-zero — finishing 2 batches in flight',
    );
    expect(progressLine(progress({ stoppedEarly, running: running.slice(1) }), 45.2)).toMatch(/ — finishing 1 batch in flight$/);
    expect(progressLine(progress({ stoppedEarly, running: [] }), 45.2)).toMatch(/  stopped early: delta-excludes-zero at 120 of 400 rows$/);
  });

  it('dropped rows count as finished, not as ok or failed', () => {
    const line = progressLine(progress({ planned: 100, done: 10, failed: 5, dropped: 5 }), 1, 10);
    expect(line).toBe('[##........] 20/100 rollouts  10 ok  5 failed  1.0 rows/s  ETA 1m20s');
  });

  it('ETA in seconds, minutes and hours', () => {
    const at = (remaining: number, rate: number) => eta(progressLine(progress({ planned: remaining, done: 0, failed: 0 }), rate));
    expect(at(0, 5)).toBe('0s');
    expect(at(59, 1)).toBe('59s');
    expect(at(60, 1)).toBe('1m00s');
    expect(at(61, 1)).toBe('1m01s');
    expect(at(1000, 10)).toBe('1m40s');
    expect(at(3599, 1)).toBe('59m59s');
    expect(at(3600, 1)).toBe('1h00m');
    expect(at(10_000, 1)).toBe('2h46m');
    expect(at(100 * 3600 + 59 * 60, 1)).toBe('100h59m');
  });

  it('ETA rounding at the unit boundaries', () => {
    const at = (remaining: number, rate: number) => eta(progressLine(progress({ planned: remaining, done: 0, failed: 0 }), rate));
    expect(at(1, 2)).toBe('1s'); // 0.5 s rounds up
    expect(at(1196, 20)).toBe('1m00s'); // 59.8 s rounds to a whole minute, not "60s"
    expect(at(71_996, 20)).toBe('1h00m'); // 3599.8 s
  });

  it('no rate yet: ETA ?', () => {
    expect(eta(progressLine(progress(), 0))).toBe('?');
    expect(progressLine(progress(), 0)).toContain('0.0 rows/s');
  });

  it('the rate is printed with one decimal', () => {
    expect(progressLine(progress(), 1234.56)).toContain('1234.6 rows/s');
    expect(progressLine(progress(), 0.04)).toContain('0.0 rows/s');
  });

  it('the bar is always `width` characters, filled in proportion to finished/planned', () => {
    for (const width of [0, 1, 10, 24, 50]) {
      for (const finished of [0, 1, 33, 50, 99, 100]) {
        const line = progressLine(progress({ planned: 100, done: finished, failed: 0, dropped: 0 }), 1, width);
        const b = bar(line);
        expect(b.length).toBe(width);
        expect(b).toMatch(/^#*\.*$/);
        expect(b.replace(/\./g, '').length).toBe(Math.round((finished / 100) * width));
      }
    }
  });

  it('default width 24; empty at 0, full at the end', () => {
    expect(bar(progressLine(progress({ done: 0, failed: 0 }), 1))).toBe('.'.repeat(24));
    expect(bar(progressLine(progress({ done: 398, failed: 2 }), 1))).toBe('#'.repeat(24));
    expect(bar(progressLine(progress({ done: 200, failed: 0 }), 1, 10))).toBe('#####.....');
  });

  it('more finished than planned: the bar is clamped full', () => {
    expect(bar(progressLine(progress({ planned: 10, done: 12, failed: 0 }), 1, 8))).toBe('########');
  });

  it('a plan of 0 rows shows a full bar, 0/0 rows', () => {
    const line = progressLine(progress({ planned: 0, done: 0, failed: 0 }), 0, 4);
    expect(line).toBe('[####] 0/0 rollouts  0 ok  0 failed  0.0 rows/s  ETA ?');
  });

  it('phases other than verify print the phase name only', () => {
    const phases: Phase[] = ['guard', 'prepare', 'plan', 'aggregate', 'done'];
    // (any other phase, e.g. a wait between re-judgment rounds, prints its name the same way)
    for (const phase of phases) expect(progressLine(progress({ phase }), 50)).toBe(`${phase}…`);
  });
});

/** A pending verifyBatch as describe() shows it: its heartbeated checkpoint (batch, counts), its last failure. */
const pendingBatch = (batch: number, main: number, failed: number, over: Record<string, unknown> = {}) => ({
  activityId: String(batch),
  activityType: { name: 'verifyBatch' },
  attempt: 1,
  heartbeatDetails: {
    payloads: [
      defaultPayloadConverter.toPayload({ done: [], round: 0, batch, counts: { main, failed, dropped: 0 }, requestsUsed: main + failed }),
    ],
  },
  ...over,
});
const running = (...batches: number[]) => batches.map((batch) => ({ batch, rows: 100, slots: 2 }));

describe('live progress (rows answered inside running batches)', () => {
  it("adds the running batches' heartbeated counts to the committed ones", () => {
    const pending = [pendingBatch(0, 30, 2), pendingBatch(1, 5, 0), { activityType: { name: 'commitBatches' } }];
    const p = progress({ planned: 400, done: 0, failed: 0, running: running(0, 1), effectiveConcurrency: 4, concurrency: 4 });
    const line = progressLine(p, 0, 24, { view: runView(p, batchBeats(pending)) });
    expect(line).toContain('37/400 rollouts  35 ok  2 failed');
  });

  it('never exceeds the planned total', () => {
    const p = progress({ planned: 400, done: 100, failed: 0, running: running(0), effectiveConcurrency: 4, concurrency: 4 });
    const view = runView(p, batchBeats([pendingBatch(0, 500, 0)]));
    expect(view.answered).toBe(400);
    expect(progressLine(p, 1, 24, { view })).toContain('400/400 rollouts');
  });

  it('during an outage, the reason; not for an attempt that ended because its worker shut down', () => {
    const failure = (message: string, type?: string) => ({ message, applicationFailureInfo: type ? { type } : null });
    const down = outageOf([pendingBatch(0, 3, 0, { attempt: 3, lastFailure: failure('resources server is unavailable: HTTP 503') })]);
    expect(progressLine(progress(), 1, 24, { outage: down })).toMatch(/ {2}waiting: resources server is unavailable: HTTP 503$/);
    const shutdown = outageOf([pendingBatch(0, 3, 0, { attempt: 2, lastFailure: failure('the worker shut down', 'WorkerShutdown') })]);
    expect(shutdown).toBeNull();
  });

  it('rollouts (keys) and attempts apart in a re-judgment round', () => {
    // 400 keys; round 2 plans 40 of them again: 440 attempts, 420 finished.
    const line = progressLine(progress({ round: 1, keys: 400, planned: 440, done: 400, failed: 20 }), 0);
    expect(line).toContain('380/400 rollouts');
    expect(line).toContain('round 2  attempts 420/440');
    // Round 2 started while the first pass is still sent: both are named.
    const streamed = progressLine(progress({ round: 1, oldestRound: 0, keys: 400, planned: 410, done: 200, failed: 10 }), 0);
    expect(streamed).toContain('  rounds 1–2  attempts 210/410');
  });

  it('the re-judgment wait shows the time left', () => {
    const p = progress({ phase: 'rejudge-wait', rejudgeAt: 100_000 });
    expect(progressLine(p, 0, 24, { now: 58_000 })).toBe('waiting to re-judge (round 2): starts in 42s');
    expect(progressLine(p, 0, 24, { now: 200_000 })).toBe('waiting to re-judge (round 2): starts in 0s');
    // Streamed rounds: round 3 has started while round 2's last failures wait; the run says which round is next.
    const streamed = progress({ phase: 'rejudge-wait', round: 2, rejudgeAt: 100_000, rejudgeRound: 3 });
    expect(progressLine(streamed, 0, 24, { now: 98_000 })).toBe('waiting to re-judge (round 3): starts in 2s');
  });
});

describe('progress line: the live estimate', () => {
  const iv = (estimate: number, lo: number, hi: number) => ({ estimate, lo, hi });
  const tasks = { seen: 30, pending: 1, planned: 100 };
  const view = {
    tasks,
    oldMean: iv(0.5, 0.5, 0.5),
    newMean: iv(0.531, 0.4, 0.6),
    delta: iv(0.031, -0.004, 0.066),
    flipsUp: iv(0.05, 0, 0.1),
    flipsDown: iv(0.02, 0, 0.08),
  };
  it('shows the delta over all agents with its interval, signed; nothing without an estimate or when it is off', () => {
    const line = progressLine(progress({ estimate: { confidence: 0.95, perAgent: { a: view }, all: view } }), 1);
    expect(line).toContain('  Δ +0.031 [−0.004, +0.066]');
    expect(progressLine(progress(), 1)).not.toContain('Δ');
    expect(
      progressLine(progress({ estimate: { confidence: 0.95, perAgent: {}, all: { tasks, off: 'no tasks planned' } } }), 1),
    ).not.toContain('Δ');
  });
  it('an exact value (every task in) is shown as such', () => {
    const exact = { ...view, delta: iv(0.02, 0.02, 0.02) };
    expect(progressLine(progress({ estimate: { confidence: 0.95, perAgent: {}, all: exact } }), 1)).toContain('Δ +0.020 (exact)');
  });
});
