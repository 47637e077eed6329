import { workflowInfo } from '@temporalio/workflow';
import { rejudgeDelayMs, rejudgeGatherMs } from '../src/config/run-defaults.js';
import { operationPrefix } from '../src/contract/rejudgment.js';
import type { RunSpec } from '../src/contract/run-spec.js';
import { long } from './activity-proxies.js';
import type { RunState } from './run-state.js';
import { batchesOf, segmentOf, totalBatches, type Segment, type Unplanned } from './segments.js';
import { dueAfter } from './selected.js';

/**
 * Re-judgment (beyond NeMo Gym, which needs a human to run --resume again), streamed: the rows that
 * committed batches selected for the next round (their judge failures) are planned as segments of
 * the verify window (segments.ts) while the first pass still runs, not once a round has drained.
 * The rows `choose` picks (window-segments.ts: a round's rows whose delay has passed, once others
 * have had a while to join them; or every one, a segment then due at their delay) are planned per
 * source segment with `planRound`, keeping the keys that may still be attempted (fewer failed
 * attempts than the cap, none terminal); a plan with rows becomes a segment, launched before the
 * rest of the first plan. No row is judged again sooner than its delay after its failure (a few
 * seconds, doubling each round up to a ceiling: `rejudgeDelayMs`). Each failed attempt has left
 * exactly one sidecar row, so the files end up as a NeMo Gym run followed by repeated `--resume`
 * runs would leave them.
 */
export async function planUnplanned(spec: RunSpec, st: RunState, choose: (u: Unplanned) => boolean): Promise<void> {
  const chosen = (st.unplanned ?? []).filter(choose);
  st.unplanned = (st.unplanned ?? []).filter((u) => !chosen.includes(u));
  const sources = [...new Set(chosen.map((u) => u.source))];
  for (const source of sources)
    await planSegment(
      spec,
      st,
      chosen.filter((u) => u.source === source),
    );
  if (st.unplanned.length === 0) st.unplanned = undefined;
}

/** Plans one source segment's selected rows; adds a segment when any may still be attempted. */
async function planSegment(spec: RunSpec, st: RunState, us: Unplanned[]): Promise<void> {
  const segments = st.segments!;
  const from = segmentOf(segments, us[0].source);
  const round = from.round + 1;
  const first = totalBatches(segments);
  const next = await long.planRound.executeWithOptions({ summary: `plan re-judgment round ${round + 1}` }, [
    {
      workDir: st.outputs!.workDir,
      round: from.round,
      batches: us.map((u) => u.batch),
      segment: first,
      plan: from.plan,
      maxAttempts: spec.maxAttempts,
    },
  ]);
  const rows = us.reduce((n, u) => n + u.rows, 0);
  st.roundJudgeFailed -= next.rows;
  if (next.rows === 0) {
    if (round > (st.capAnnounced ?? 0))
      st.messages.push(
        `Re-judging: ${rows} row(s) judge-failed in round ${round}, each at the attempt cap (${spec.maxAttempts}): no round ${round + 1}`,
      );
    st.capAnnounced = Math.max(st.capAnnounced ?? 0, round);
    return;
  }
  const dueAt = Math.max(...us.map((u) => dueAfter(spec, st, u)));
  segments.push({
    round,
    plan: next,
    first,
    batches: batchesOf(next.rows, spec.batchSize),
    launched: 0,
    operation: operationPrefix(workflowInfo().firstExecutionRunId, round),
    dueAt,
  });
  if (round > (st.rejudgeAnnounced ?? 0)) announce(spec, st, round, rows, next.rows, dueAt - Date.now());
  st.planned += next.rows;
  if (st.replannedPerAgent !== null)
    for (const [agent, n] of Object.entries(next.rowsPerAgent)) st.replannedPerAgent[agent] = (st.replannedPerAgent[agent] ?? 0) + n;
}

/** A round's first segment: said once, since its later failures join it as they come. */
function announce(spec: RunSpec, st: RunState, round: number, failed: number, planned: number, leftMs: number): void {
  st.rejudgeAnnounced = round;
  const kept = planned === failed ? '' : ` (${planned} of them may still be attempted)`;
  const starts = leftMs < 500 ? 'starts now' : `starts in ${Math.round(leftMs / 1000)}s`;
  const delay = Math.round(rejudgeDelayMs(spec.rejudgeDelayMs, round - 1) / 1000);
  st.messages.push(
    `Re-judging: ${failed} row(s) judge-failed in round ${round} so far${kept}; round ${round + 1} (of at most ` +
      `${spec.maxAttempts}) ${starts}, each failure judged again at least ${delay}s after it`,
  );
}

/** The plan timer's summary in the history: what it waits for. */
export function planWaitSummary(spec: RunSpec, round: number, leftMs: number): string {
  const delayMs = rejudgeDelayMs(spec.rejudgeDelayMs, round);
  const gather = Math.round(rejudgeGatherMs(delayMs) / 1000);
  const after = `${Math.round(delayMs / 1000)}s after a judge failure of round ${round + 1}, and ${gather}s after its batch's commit for others to join`;
  return `wait ${Math.round(leftMs / 1000)}s (${after}) before planning re-judgment round ${round + 2}`;
}

/** A segment's timer summary in the history: what it waits for. */
export function dueSummary(spec: RunSpec, seg: Segment, leftMs: number): string {
  const after = `${Math.round(rejudgeDelayMs(spec.rejudgeDelayMs, seg.round - 1) / 1000)}s after round ${seg.round}'s last judge failure`;
  return `wait ${Math.round(leftMs / 1000)}s (${after}) before re-judgment round ${seg.round + 1}`;
}
