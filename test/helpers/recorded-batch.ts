/**
 * A batch result as the report reads it from a run's history (src/report/history-timeline.ts): its
 * round, start and end (seconds after 2026-01-01T00:00:00Z), rows scored and failed (all judge
 * failures), and a mean latency of 100 ms in the first round, 300 ms in later ones.
 */
import type { RecordedBatch } from '../../src/report/history-timeline.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

export function recordedBatch(round: number, startS: number, endS: number, main: number, failed: number, attempt = 1): RecordedBatch {
  return {
    round,
    started: at(startS),
    time: at(endS),
    attempt,
    result: {
      main,
      failed,
      dropped: 0,
      rejected: 0,
      judgeFailed: failed,
      throttled: 0,
      latencyMsSum: (main + failed) * (round === 0 ? 100 : 300),
      latencyCount: main + failed,
    },
  };
}
