/**
 * The run's "current details" in the Temporal UI (the workflow page's summary panel): its phase and
 * counts, set whenever they change. `setCurrentDetails` only keeps a string in the workflow's memory,
 * answered by the built-in metadata query: it adds no history event and no command, so changing it
 * changes no history.
 */
import { setCurrentDetails } from '@temporalio/workflow';
import type { Phase } from '../src/contract/run-spec.js';
import type { InFlight, RunState } from './run-state.js';
import { requestsShown } from './budget.js';

/** Sets the phase and shows it. */
export function enterPhase(st: RunState, phase: Phase): void {
  st.phase = phase;
  showDetails(st);
}

/** The details as Markdown (the UI renders it): phase, round, counts, concurrency, output. */
export function detailsOf(st: RunState, inflight?: Map<number, InFlight>): string {
  const t = st.totals;
  const inFlightRows = inflight ? [...inflight.values()].reduce((a, b) => a + b.rows, 0) : 0;
  const round = st.round > 0 ? ` (re-judge round ${st.round + 1})` : '';
  return [
    `**Phase:** ${st.phase}${round}${st.paused ? ' · **paused**' : ''}${st.budgetPaused ? ' · **paused: request budget spent**' : ''}`,
    `**Rows:** ${t.main} scored · ${t.failed} failed (${t.judgeFailed} judge failures, ${t.rejected} rejected) · ` +
      `${t.dropped} not persisted · ${inFlightRows} in flight · ${st.planned} planned`,
    `**Batches:** ${st.nextBatch} launched in this round · concurrency ${st.effective}/${st.concurrency} · generation ${st.generation}`,
    ...(st.maxRequests !== null ? [`**/verify requests:** ${requestsShown(st)}`] : []),
    ...(st.outputs ? [`**Output:** ${st.outputs.output}`] : []),
  ].join('\n\n');
}

export function showDetails(st: RunState, inflight?: Map<number, InFlight>): void {
  setCurrentDetails(detailsOf(st, inflight));
}
