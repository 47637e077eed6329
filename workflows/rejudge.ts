import { workflowInfo } from '@temporalio/workflow';
import { rejudgeDelayMs } from '../src/config/run-defaults.js';
import { operationPrefix } from '../src/contract/rejudgment.js';
import type { RunSpec } from '../src/contract/run-spec.js';
import { long } from './activity-proxies.js';
import type { RunState } from './run-state.js';
import { batchesOf, totalBatches, type Segment, type Unplanned } from './segments.js';

/**
 * Re-judgment (beyond NeMo Gym, which needs a human to run --resume again), streamed: the rows that
 * committed batches selected for the next round (their judge failures) are planned as a segment of
 * the verify window (segments.ts) while the older batches still answer, not once a round has
 * drained. Each unplanned segment's batches are planned with `planRound`, keeping the keys that may
 * still be attempted (fewer sidecar rows than the cap, none terminal: each key's earlier attempts
 * are committed); a plan with rows is announced and becomes a segment due its delay (a few seconds,
 * doubling each round up to a ceiling: `rejudgeDelayMs`) after the last of its rows' failures, so no
 * row is judged again sooner than the delay after its failure. Each failed attempt has left exactly
 * one sidecar row, so the files end up as a NeMo Gym run followed by repeated `--resume` runs would
 * leave them. The segments are added to `st.segments`.
 */
export async function planUnplanned(spec: RunSpec, st: RunState): Promise<void> {
  while (st.unplanned && st.unplanned.length > 0) {
    await planSegment(spec, st, st.unplanned[0]);
    st.unplanned.shift();
  }
  st.unplanned = undefined;
}

/** Plans one source segment's selected rows; adds a segment when any may still be attempted. */
async function planSegment(spec: RunSpec, st: RunState, u: Unplanned): Promise<void> {
  const segments = st.segments!;
  const from = segments[u.segment];
  const round = from.round + 1;
  const next = await long.planRound.executeWithOptions({ summary: `plan re-judgment round ${round + 1}` }, [
    {
      workDir: st.outputs!.workDir,
      round: from.round,
      batches: u.batches,
      segment: segments.length,
      plan: from.plan,
      maxAttempts: spec.maxAttempts,
    },
  ]);
  st.roundJudgeFailed -= next.rows;
  const more = segments.some((s) => s.round === round) ? ' more' : '';
  const failed = `Re-judging: ${u.rows}${more} row(s) judge-failed in round ${round}`;
  if (next.rows === 0) {
    st.messages.push(`${failed}, each at the attempt cap (${spec.maxAttempts}): no round ${round + 1}`);
    return;
  }
  const delayMs = rejudgeDelayMs(spec.rejudgeDelayMs, from.round);
  // Workflow time (deterministic); at least a millisecond ahead: its timer is in the history.
  const dueAt = Math.max(u.selectedAt + delayMs, Date.now() + 1);
  const seg: Segment = {
    round,
    plan: next,
    first: totalBatches(segments),
    batches: batchesOf(next.rows, spec.batchSize),
    operation: operationPrefix(workflowInfo().firstExecutionRunId, round),
    dueAt,
  };
  segments.push(seg);
  const left = dueAt - Date.now();
  const rows = next.rows === u.rows ? '' : ` re-judges ${next.rows} of them and`;
  const starts = left < 500 ? 'starts now' : `starts in ${Math.round(left / 1000)}s`;
  const which = more ? `more of round ${round + 1}` : `round ${round + 1} (of at most ${spec.maxAttempts})`;
  st.messages.push(`${failed}; ${which}${rows} ${starts}`);
  st.planned += next.rows;
  if (st.replannedPerAgent !== null)
    for (const [agent, n] of Object.entries(next.rowsPerAgent)) st.replannedPerAgent[agent] = (st.replannedPerAgent[agent] ?? 0) + n;
}

/** The timer's summary in the history: what it waits for, and from what. */
export function dueSummary(spec: RunSpec, seg: Segment, leftMs: number): string {
  const after = `${Math.round(rejudgeDelayMs(spec.rejudgeDelayMs, seg.round - 1) / 1000)}s after round ${seg.round}'s last judge failure`;
  return `wait ${Math.round(leftMs / 1000)}s (${after}) before re-judgment round ${seg.round + 1}`;
}
