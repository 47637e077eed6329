/**
 * The run's "current details" in the Temporal UI (the workflow page's summary panel): its phase and
 * counts, set whenever they change. `setCurrentDetails` only keeps a string in the workflow's memory,
 * answered by the built-in metadata query: it adds no history event and no command, so changing it
 * changes no history.
 */
import { setCurrentDetails } from '@temporalio/workflow';
import type { Phase } from '../src/contract/run-spec.js';
import { progressOf } from './progress.js';
import type { InFlight, RunState } from './run-state.js';
import { runView } from '../src/contract/run-view.js';
import { requestsShown } from './budget.js';
import { estimateText, FILE_ORDER_NOTE } from '../src/contract/estimate-text.js';
import { runEstimateView } from '../src/stats/run-estimate.js';
import { stoppedEarlyText } from '../src/contract/stop-rules.js';

/** Sets the phase and shows it. */
export function enterPhase(st: RunState, phase: Phase): void {
  st.phase = phase;
  showDetails(st);
}

/**
 * The details as Markdown (the UI renders it): counts first, then phase, round (the same view as the terminal's
 * and `reverify status`, run-view.ts, without the running batches' checkpoints), concurrency, output.
 */
export function detailsOf(st: RunState, inflight: Map<number, InFlight> = new Map()): string {
  const t = st.totals;
  const v = runView(progressOf(st, inflight));
  const round = st.round > 0 ? ` (re-judge round ${st.round + 1})` : '';
  // The counts first: the line a user reads on the run's page.
  return [
    `**Rows:** ${v.answered}/${v.planned} answered · ${v.scored} scored · ${v.failed} failed (${t.judgeFailed} judge failures, ${t.rejected} rejected) · ` +
      `${v.notPersisted} not persisted · ${v.inFlight} in flight`,
    `**Phase:** ${st.phase}${round}${st.paused ? ' · **paused**' : ''}${st.budgetPaused ? ' · **paused: request budget spent**' : ''}` +
      (st.stoppedEarly ? ` · **${stoppedEarlyText(st.stoppedEarly)}**` : ''),
    `**Batches:** ${st.batchesLaunched} launched · concurrency ${st.effective}/${st.concurrency} · generation ${st.generation}`,
    ...(st.maxRequests !== null ? [`**/verify requests:** ${requestsShown(st)}`] : []),
    ...(st.estimate
      ? [
          `**Estimate** (${st.estimate.confidence * 100}%, all agents): ${estimateText(runEstimateView(st.estimate).all)}` +
            (st.estimate.fileOrder ? ` (${FILE_ORDER_NOTE})` : ''),
        ]
      : []),
    ...(st.outputs ? [`**Output:** ${st.outputs.output}`] : []),
  ].join('\n\n');
}

export function showDetails(st: RunState, inflight?: Map<number, InFlight>): void {
  setCurrentDetails(detailsOf(st, inflight));
}
