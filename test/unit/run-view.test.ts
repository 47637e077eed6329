import { describe, expect, it } from 'vitest';
import type { Progress } from '../../src/contract/run-spec.js';
import { runView, steadyView, type BatchBeat } from '../../src/contract/run-view.js';

/** A run of 1,000 rows in batches of 250 at concurrency 4 (one /verify slot per batch). */
function progress(over: Partial<Progress> = {}): Progress {
  return {
    phase: 'verify',
    round: 0,
    planned: 1000,
    keys: 1000,
    done: 0,
    failed: 0,
    dropped: 0,
    rejected: 0,
    judgeFailed: 0,
    inFlightRows: 0,
    perAgent: {},
    messages: [],
    outputs: null,
    generation: 0,
    concurrency: 4,
    effectiveConcurrency: 4,
    paused: false,
    requests: { used: 0, max: null },
    running: [],
    landed: { main: 0, failed: 0, dropped: 0, requests: 0 },
    ...over,
  };
}
const beat = (batch: number, main: number, failed = 0, round = 0): BatchBeat => ({
  round,
  batch,
  main,
  failed,
  dropped: 0,
  requests: main + failed,
});
const slots = (...batches: number[]) => batches.map((batch) => ({ batch, rows: 250, slots: 1 }));

describe('runView: one view of a live run', () => {
  it('counts a batch once: by its checkpoint while it runs, by its result once it ended, by the totals once committed', () => {
    const runningView = runView(progress({ running: slots(0, 1, 2, 3) }), [beat(0, 200, 10), beat(1, 100), beat(2, 50), beat(3, 40)]);
    expect(runningView).toMatchObject({ answered: 400, scored: 390, failed: 10, inFlight: 4 });
    // Batch 0 ended (its result waits for its commit): its last checkpoint, still listed by describe, is not added again.
    const ended = progress({
      running: slots(1, 2, 3, 4),
      landed: { main: 238, failed: 12, dropped: 0, requests: 0 },
      requests: { used: 250, max: null },
    });
    const endedView = runView(ended, [beat(0, 200, 10), beat(1, 110), beat(2, 60), beat(3, 50)]);
    expect(endedView).toMatchObject({ answered: 470, scored: 458, failed: 12 });
    expect(endedView.requests.used).toBe(250 + 220);
    // Committed: in the totals, no longer landed.
    const committed = runView(progress({ running: slots(1, 2, 3, 4), done: 238, failed: 12 }), [beat(1, 120), beat(2, 70), beat(3, 60)]);
    expect(committed).toMatchObject({ answered: 500, scored: 488 });
  });

  it('a batch held when its worker stopped counts what it answered until its next launch sends a checkpoint, once', () => {
    const sofar = { main: 90, failed: 10, dropped: 0, requests: 0 };
    // Stopped (Ctrl-C): not running, its rows held.
    expect(runView(progress({ running: [], held: sofar }))).toMatchObject({ answered: 100, scored: 90, failed: 10, inFlight: 0 });
    // Launched again, no checkpoint yet: its rows so far, and only its unanswered rows may be in flight.
    const again = progress({ running: [{ batch: 0, rows: 250, slots: 4, sofar }] });
    expect(runView(again)).toMatchObject({ answered: 100, scored: 90, inFlight: 4 });
    // Its checkpoint (which carries the held rows) replaces them: counted once.
    expect(runView(again, [beat(0, 120, 10)])).toMatchObject({ answered: 130, scored: 120, failed: 10 });
  });

  it('rows in flight, in rows, never above the limit in force; a finished batch has none', () => {
    const p = progress({
      running: [
        { batch: 0, rows: 250, slots: 8 },
        { batch: 1, rows: 250, slots: 8 },
      ],
      effectiveConcurrency: 16,
    });
    expect(runView(p, [beat(0, 248)]).inFlight).toBe(2 + 8);
    expect(runView({ ...p, effectiveConcurrency: 6 }).inFlight).toBe(6);
  });

  it("ignores a checkpoint of another round's batch of the same number", () => {
    const p = progress({ round: 1, planned: 1100, running: slots(0), done: 950, failed: 50 });
    expect(runView(p, [beat(0, 250, 0, 0)]).answered).toBe(1000);
  });

  it('never more than planned; a steady view never goes back', () => {
    const a = runView(progress({ running: slots(0) }), [beat(0, 300)]);
    expect(a.answered).toBe(300);
    expect(runView(progress({ planned: 200, running: slots(0) }), [beat(0, 300)]).answered).toBe(200);
    const later = runView(progress({ running: slots(0) }), [beat(0, 250)]);
    expect(steadyView(a, later)).toMatchObject({ answered: 300, scored: 300, settled: 300 });
  });
});

describe('workers polling: only those seen recently', () => {
  it('counts a poller by its last access time; one the server still lists after its worker exited is not counted', async () => {
    const { POLLER_GONE_MS, seenSince } = await import('../../src/cli/run-report.js');
    const now = 1_000_000_000_000;
    const at = (ms: number) => ({ seconds: { toNumber: () => Math.floor(ms / 1000) }, nanos: (ms % 1000) * 1e6 });
    expect(seenSince(at(now - 5_000), now - POLLER_GONE_MS)).toBe(true);
    expect(seenSince(at(now - POLLER_GONE_MS - 1_000), now - POLLER_GONE_MS)).toBe(false);
    expect(seenSince(null, now - POLLER_GONE_MS)).toBe(true);
  });
});
