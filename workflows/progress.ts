/** The progress query's answer, from the run's state and the batches in flight. */
import type { Progress } from '../src/contract/run-spec.js';
import { addRows, NO_ROWS, type RowCounts } from '../src/contract/run-view.js';
import { runEstimateView } from '../src/stats/run-estimate.js';
import type { InFlight, RunState } from './run-state.js';

/** What the progress query answers. */
export function progressOf(st: RunState, inflight: Map<number, InFlight>): Progress {
  return {
    phase: st.phase,
    planned: st.planned,
    round: st.round,
    ...oldestRound(st, inflight),
    done: st.totals.main,
    failed: st.totals.failed,
    dropped: st.totals.dropped,
    rejected: st.totals.rejected,
    judgeFailed: st.totals.judgeFailed,
    inFlightRows: [...inflight.values()].reduce((a, b) => a + b.rows, 0),
    running: [...inflight.entries()].map(([batch, f]) => ({ batch, rows: f.rows, slots: f.slots, ...sofarOf(st, batch) })),
    landed: Object.values(st.landed ?? {}).reduce(addRows, NO_ROWS),
    held: Object.entries(st.heldRows ?? {})
      .filter(([batch]) => !inflight.has(Number(batch)))
      .map(([, rows]) => rows)
      .reduce(addRows, NO_ROWS),
    perAgent: st.totals.perAgent,
    messages: st.messages,
    outputs: st.outputs,
    generation: st.generation,
    concurrency: st.concurrency,
    effectiveConcurrency: st.effective,
    paused: st.paused || st.budgetPaused,
    budgetPaused: st.budgetPaused,
    requests: { used: st.requestsUsed, max: st.maxRequests },
    sidecarLength: st.sidecarLength,
    sidecarOpenedAt: st.sidecarOpenedAt,
    keys: st.keysPlanned,
    rejudgeAt: st.phase === 'rejudge-wait' ? (st.rejudgeAt ?? null) : null,
    ...(st.phase === 'rejudge-wait' && st.rejudgeRound !== undefined ? { rejudgeRound: st.rejudgeRound } : {}),
    estimate: st.estimate ? runEstimateView(st.estimate) : null,
    ...(st.noise ? { noise: st.noise } : {}),
    stoppedEarly: st.stoppedEarly ?? null,
  };
}

/** A held batch's rows so far, while it runs again (its checkpoint counts them once it has one). */
function sofarOf(st: RunState, batch: number): { sofar?: RowCounts } {
  const rows = st.heldRows?.[batch];
  return rows ? { sofar: rows } : {};
}

/** The oldest round still running (rounds overlap: re-judgment starts while the first pass is sent), when older than the latest. */
function oldestRound(st: RunState, inflight: Map<number, InFlight>): { oldestRound?: number } {
  // The first plan's batches a --stop-when left unlaunched never run.
  const open = (st.segments ?? []).filter((s, i) => s.launched < s.batches && !(i === 0 && st.stoppedEarly)).map((s) => s.round);
  const oldest = Math.min(st.round, ...open, ...[...inflight.values()].map((f) => f.round));
  return oldest < st.round ? { oldestRound: oldest } : {};
}
