/** `reverify status` (and `--json`) of a live run once a `--stop-when` rule fired: the rule and the batches still finishing. */
import { describe, expect, it } from 'vitest';
import { liveReport, type RunReport } from '../../src/cli/run-report.js';
import { statusLines } from '../../src/cli/status-command.js';
import type { Progress } from '../../src/contract/run-spec.js';
import { runView } from '../../src/contract/run-view.js';

function progress(over: Partial<Progress> = {}): Progress {
  return {
    phase: 'verify',
    round: 0,
    planned: 400,
    done: 117,
    failed: 3,
    dropped: 0,
    rejected: 0,
    judgeFailed: 0,
    inFlightRows: 40,
    perAgent: {},
    messages: [],
    outputs: null,
    generation: 0,
    concurrency: 8,
    effectiveConcurrency: 8,
    paused: false,
    running: [
      { batch: 7, rows: 20, slots: 4 },
      { batch: 8, rows: 20, slots: 4 },
    ],
    ...over,
  };
}

const report = (p: Progress): RunReport => ({
  workflowId: 'reverify-out',
  runId: 'r1',
  output: '/tmp/out.jsonl',
  state: 'RUNNING',
  started: '2026-01-01T00:00:00Z',
  closed: null,
  durationSeconds: 60,
  uiUrl: null,
  taskQueue: 'q',
  workersPolling: null,
  live: liveReport(p, runView(p), null),
  result: null,
  failure: null,
});

describe('status of a run stopped early', () => {
  it('--json has stoppedEarly with the batches in flight; the text says the rule and that they are finishing', () => {
    const stoppedEarly = { rule: 'width<0.05', rows: 120, planned: 400 };
    const r = report(progress({ stoppedEarly }));
    expect(r.live!.stoppedEarly).toEqual({ ...stoppedEarly, batchesInFlight: 2 });
    expect(statusLines(r)).toContain('Phase: verify, round 1, stopped early: width<0.05 — finishing 2 batches in flight');
  });

  it('no rule fired: null, and nothing said', () => {
    const r = report(progress({ stoppedEarly: null }));
    expect(r.live!.stoppedEarly).toBeNull();
    expect(statusLines(r)).toContain('Phase: verify, round 1');
  });
});
